// /admin/models: add, redeploy and remove models on a running server. Admin keys
// only: any other valid key gets 403 permission_denied. The work itself is the
// runtime's (the Node server's model operations); this module checks and shapes.
import { z } from 'zod';
import { catalogEntrySchema, upstreamSchema } from '../../engine/catalog.js';
import type { ModelState } from '../../engine/protocol.js';
import type { ModelAdmin } from '../../types.js';
import { type Ctx, type RouteDeps, readJson } from '../context.js';
import { ApiError, jsonResponse, modelFailed } from '../errors.js';
import { parseBody } from '../schemas/common.js';
import { modelObject } from './models.js';

const addSchema = z
  .object({
    id: z.string().regex(/^svc\/[A-Za-z0-9._-]+$/, 'model ids look like svc/<name> (letters, digits, . _ -)'),
    from: z.string().min(1).optional(),
    upstream: upstreamSchema.optional(),
    task: z.enum(['chat', 'completion', 'embedding', 'rerank', 'transcription']).optional(),
    context_length: z.number().int().positive().optional(),
    class: z.string().min(1).optional(),
    dtype: catalogEntrySchema.shape.dtype,
    price: z.object({ input_per_1m: z.number().min(0), output_per_1m: z.number().min(0) }).optional(),
  })
  .refine((r) => (r.from === undefined) !== (r.upstream === undefined), { message: 'give either from or upstream', path: ['from'] });

/** The public model object plus what operators need: why it failed, its download. */
export function adminObject(m: ModelState) {
  return {
    ...modelObject(m),
    detail: m.detail ?? null,
    ...(m.download ? { download: m.download } : {}),
    ...(m.in_flight !== undefined ? { in_flight: m.in_flight } : {}),
  };
}

function requireAdmin(c: Ctx): void {
  if (!c.get('principal').admin) {
    throw new ApiError(403, 'invalid_request_error', 'permission_denied', 'This endpoint needs an admin key (create one with `hearth keys create --admin`).');
  }
}

function adminOf(c: Ctx, deps: RouteDeps): ModelAdmin {
  requireAdmin(c);
  const admin = deps.runtime.admin;
  if (!admin) throw new ApiError(404, 'invalid_request_error', 'unknown_url', 'This server does not manage models at run time.');
  return admin;
}

function idParam(c: Ctx): string {
  const raw = c.req.param('id') ?? '';
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

export function listAdminModels(deps: RouteDeps) {
  return async (c: Ctx): Promise<Response> => {
    const admin = adminOf(c, deps);
    return jsonResponse({ object: 'list', data: (await admin.list()).map(adminObject) });
  };
}

export function addModel(deps: RouteDeps) {
  return async (c: Ctx): Promise<Response> => {
    const admin = adminOf(c, deps);
    const req = parseBody(addSchema, await readJson(c, deps));
    const state = await admin.add(req as Parameters<ModelAdmin['add']>[0]);
    return jsonResponse(adminObject(state), 201);
  };
}

/** POST /admin/models/{id}/redeploy, /load or /unload[?force=true] (the id's slash literal or %2F-encoded). */
export function modelAction(deps: RouteDeps) {
  return async (c: Ctx): Promise<Response> => {
    const path = idParam(c);
    const action = /\/(redeploy|load|unload)$/.exec(path)?.[1];
    if (!action) {
      throw new ApiError(404, 'invalid_request_error', 'unknown_url', `Unknown request URL: POST ${c.req.path}. Use POST /admin/models/{id}/redeploy, /load or /unload.`);
    }
    const id = path.slice(0, -(action.length + 1));
    if (action === 'redeploy') return jsonResponse(adminObject(await adminOf(c, deps).redeploy(id)), 202);
    requireAdmin(c);
    const engine = deps.runtime.engine;
    if (!engine.loadModel || !engine.unloadModel) {
      throw new ApiError(404, 'invalid_request_error', 'unknown_url', 'This engine does not load and unload models on demand.');
    }
    // Each answers once it is done: loaded (ready or failed), or unloaded after its requests in flight.
    if (action === 'load') {
      const state = await engine.loadModel(id);
      if (state.status === 'failed') throw modelFailed(id, state.detail);
      return jsonResponse(adminObject(state));
    }
    const force = ['true', '1', ''].includes(c.req.query('force') ?? 'no');
    return jsonResponse(adminObject(await engine.unloadModel(id, { force })));
  };
}

export function removeModel(deps: RouteDeps) {
  return async (c: Ctx): Promise<Response> => {
    const admin = adminOf(c, deps);
    const id = idParam(c);
    await admin.remove(id);
    return jsonResponse({ id, object: 'model', deleted: true });
  };
}
