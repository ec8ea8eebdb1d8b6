// Sends a request for an upstream model to its forwarding (src/upstream) and
// lets every other request through to the local route. Access checks already
// ran (the router's key gate); this is the one place upstream requests hold their
// most possible cost against the cap and settle it to what the upstream delivered
// (the Responses route, which reads its body itself, comes here through forwardHeld).
import type { Hold, Principal } from '../../access/types.js';
import type { ModelState } from '../../engine/protocol.js';
import type { Runtime } from '../../types.js';
import { costShape } from '../../upstream/bounds.js';
import { forwardGenerate } from '../../upstream/generate.js';
import { forwardEmbeddings, forwardGeneration, type Body, type UpstreamRequest } from '../../upstream/openai.js';
import { readJsonObject } from '../body.js';
import { costUsd, maxPromptCost, usageRecord } from '../charge.js';
import type { Ctx, RouteDeps, TaskUse } from '../context.js';
import { defaultTextModel, resolveModel } from '../context.js';
import { imageAllowance } from '../images.js';

export type UpstreamEndpoint = 'chat' | 'completion' | 'embedding' | 'generate';

const USE: Record<UpstreamEndpoint, TaskUse> = { chat: 'chat', completion: 'text', embedding: 'embedding', generate: 'text' };

function send(endpoint: UpstreamEndpoint, body: Body, req: UpstreamRequest): Promise<Response> {
  if (endpoint === 'embedding') return forwardEmbeddings(body, req);
  if (endpoint === 'generate') return forwardGenerate(body, req);
  return forwardGeneration(endpoint, body, req);
}

/** Holds the most the request can cost: every prompt at most its bound from the request's
 * text (and the context), every completion max_tokens (or the rest). */
function reserve(runtime: Runtime, p: Principal, model: ModelState, endpoint: UpstreamEndpoint, body: Body): Promise<Hold> {
  const shape = costShape(endpoint, body);
  const price = runtime.catalog().find((e) => e.id === model.id)?.price ?? { input_per_1m: 0, output_per_1m: 0 };
  const ctx = model.context_length;
  const maxCostUsd = shape.embedding
    ? costUsd(runtime, model.id, shape.prompts.reduce((sum, b) => sum + Math.min(b, ctx), 0), 0)
    : shape.prompts.reduce((sum, b) => sum + maxPromptCost(price, ctx, { atMost: b }, shape.n, shape.maxTokens), 0);
  return runtime.access.reserve(p, { model: model.id, maxCostUsd });
}

/** Holds the most `costBody` (read as `endpoint`'s body) can cost on the upstream model, and
 * sends with a request that charges the hold what the upstream delivered; a failure before
 * anything was delivered frees it. */
export async function forwardHeld(
  runtime: Runtime,
  c: Ctx,
  model: ModelState,
  endpoint: UpstreamEndpoint,
  costBody: Body,
  sendIt: (req: UpstreamRequest) => Promise<Response>,
): Promise<Response> {
  const upstreams = runtime.upstreams!;
  const id = model.id;
  const hold = await reserve(runtime, c.get('principal'), model, endpoint, costBody);
  try {
    return await sendIt({
      pool: upstreams.pool(id)!,
      deps: upstreams.deps,
      signal: c.req.raw.signal,
      delivered: (u) => hold.delivered?.(usageRecord(runtime, id, u)),
      charge: (u, beforeReply = false) => {
        if (u) runtime.observer?.upstreamTokens?.(id, u.prompt_tokens, u.completion_tokens);
        return hold.settle(u && usageRecord(runtime, id, u), { beforeReply });
      },
    });
  } catch (err) {
    await hold.settle(null); // nothing was delivered (a no-op if a charge was already settled)
    throw err;
  }
}

export function upstreamOr(deps: RouteDeps, endpoint: UpstreamEndpoint, local: (c: Ctx) => Promise<Response>): (c: Ctx) => Promise<Response> {
  return async (c) => {
    const { runtime } = deps;
    const upstreams = runtime.upstreams;
    if (!upstreams?.size) return local(c);
    // A copy: the local route reads the original body itself.
    // Chat bodies may carry images beyond the body limit (images.ts): read as far as the local route would.
    const body = endpoint === 'chat' ? await readJsonObject(c.req.raw.clone(), deps.maxBodyBytes + imageAllowance(deps.limits), deps.maxBodyBytes) : await readJsonObject(c.req.raw.clone(), deps.maxBodyBytes);
    const id = typeof body.model === 'string' ? body.model : endpoint === 'generate' && body.model == null ? await defaultTextModel(runtime) : null;
    if (!id || !upstreams.pool(id)) return local(c);
    const model = await resolveModel(runtime, id, USE[endpoint]);
    return forwardHeld(runtime, c, model, endpoint, body, (req) => send(endpoint, body, req));
  };
}
