// Sends a request for an upstream model to its forwarding (src/upstream) and
// lets every other request through to the local route. Access checks already
// ran (the router's key gate); this is the one place upstream requests are charged.
import type { Ctx, RouteDeps, TaskUse } from '../context.js';
import { defaultTextModel, recordUsage, resolveModel } from '../context.js';
import { readJsonObject } from '../body.js';
import { forwardEmbeddings, forwardGeneration, type Body, type UpstreamRequest } from '../../upstream/openai.js';
import { forwardGenerate } from '../../upstream/generate.js';

export type UpstreamEndpoint = 'chat' | 'completion' | 'embedding' | 'generate';

const USE: Record<UpstreamEndpoint, TaskUse> = { chat: 'chat', completion: 'text', embedding: 'embedding', generate: 'text' };

function send(endpoint: UpstreamEndpoint, body: Body, req: UpstreamRequest): Promise<Response> {
  if (endpoint === 'embedding') return forwardEmbeddings(body, req);
  if (endpoint === 'generate') return forwardGenerate(body, req);
  return forwardGeneration(endpoint, body, req);
}

export function upstreamOr(deps: RouteDeps, endpoint: UpstreamEndpoint, local: (c: Ctx) => Promise<Response>): (c: Ctx) => Promise<Response> {
  return async (c) => {
    const upstreams = deps.runtime.upstreams;
    if (!upstreams?.size) return local(c);
    // A copy: the local route reads the original body itself.
    const body = await readJsonObject(c.req.raw.clone(), deps.maxBodyBytes);
    const id = typeof body.model === 'string' ? body.model : endpoint === 'generate' && body.model == null ? await defaultTextModel(deps.runtime) : null;
    const pool = id ? upstreams.pool(id) : undefined;
    if (!id || !pool) return local(c);
    await resolveModel(deps.runtime, id, USE[endpoint]);
    const principal = c.get('principal');
    return send(endpoint, body, {
      pool,
      deps: upstreams.deps,
      signal: c.req.raw.signal,
      charge: (u) => {
        deps.runtime.observer?.upstreamTokens?.(id, u.prompt_tokens, u.completion_tokens);
        return recordUsage(deps.runtime, principal, id, u.prompt_tokens, u.completion_tokens);
      },
    });
  };
}
