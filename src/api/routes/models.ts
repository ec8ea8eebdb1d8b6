// GET /v1/models and GET /v1/models/{id}. Ids contain a slash (svc/tiny-chat);
// the route takes the rest of the path, so both the literal slash and %2F work.
import type { ModelState } from '../../engine/protocol.js';
import type { Ctx, RouteDeps } from '../context.js';
import { jsonResponse, modelNotFound } from '../errors.js';
import { isAnthropicClient } from '../messages/client.js';
import { anthropicModel, anthropicModelList, servesMessages } from '../messages/models.js';

export function modelObject(m: ModelState) {
  return {
    id: m.id,
    object: 'model' as const,
    created: m.created,
    owned_by: m.owned_by,
    class: m.class,
    context_length: m.context_length,
    task: m.task,
    status: m.status,
    // Why it failed, where a client (and the page, which has no /status) reads the model.
    ...(m.status === 'failed' && m.detail ? { status_detail: m.detail } : {}),
    // What the device needed to run the graph right (its self-check at load), where the page reads it.
    ...(m.workarounds ? { workarounds: m.workarounds } : {}),
    // What a request may send it (["text"], or with "image"), where the engine knows.
    ...(m.input_modalities ? { input_modalities: m.input_modalities } : {}),
    // On-demand loading: when this idle model unloads (unix seconds; null: busy, kept or not
    // loaded), and the memory it takes loaded (its estimate, in MiB), as `ollama ps` shows them.
    ...(m.expires_at !== undefined ? { expires_at: m.expires_at } : {}),
    ...(m.size_mb !== undefined ? { size_mb: m.size_mb } : {}),
  };
}

export function listModels(deps: RouteDeps) {
  return async (c: Ctx): Promise<Response> => {
    const models = await deps.runtime.engine.models();
    // Anthropic's SDK lists models in Anthropic's shape, and sends anthropic-version to say so.
    if (isAnthropicClient(c.req)) return jsonResponse(anthropicModelList(models, new URL(c.req.url).searchParams));
    return jsonResponse({ object: 'list', data: models.map(modelObject) });
  };
}

export function getModel(deps: RouteDeps) {
  return async (c: Ctx): Promise<Response> => {
    const raw = c.req.param('id') ?? '';
    let id = raw;
    try {
      id = decodeURIComponent(raw);
    } catch {
      // A stray % that is not an escape: look the text up as it is.
    }
    const m = (await deps.runtime.engine.models()).find((x) => x.id === id);
    if (isAnthropicClient(c.req)) {
      if (!m || !servesMessages(m)) throw modelNotFound(id);
      return jsonResponse(anthropicModel(m));
    }
    if (!m) throw modelNotFound(id);
    return jsonResponse(modelObject(m));
  };
}
