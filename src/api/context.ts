// What every route shares: the Hono environment, the access gate, model lookup
// and usage recording. Kept apart from router.ts so each route module can be
// read (and tested) on its own.
import type { Context, MiddlewareHandler } from 'hono';
import { AccessError, type Principal, type RateDecision } from '../access/types.js';
import type { ModelState, ModelTask } from '../engine/protocol.js';
import type { Runtime } from '../types.js';
import { ApiError, errorToResponse, invalidRequest, modelFailed, modelNotFound, modelNotReady } from './errors.js';
import { readJsonObject } from './body.js';
import { imageAllowance } from './images.js';
import type { RequestLimits } from './limits.js';
import { isAnthropicRequest } from './messages/client.js';

export interface ApiEnv {
  Variables: {
    requestId: string;
    principal: Principal;
    /** An internal fault behind a 500, for the request log (never sent to the client). */
    fault?: unknown;
  };
}

export type Ctx = Context<ApiEnv>;

export interface RouteDeps {
  runtime: Runtime;
  maxBodyBytes: number;
  limits: RequestLimits;
  /** The front door's own audio decoder (RouterOptions.decodeAudio), where it has one. */
  decodeAudio?: (bytes: Uint8Array) => Promise<Float32Array | undefined>;
}

/**
 * The JSON body under the router's size limit. A route that takes images reads as far as its
 * images' data: URLs may go besides, and the rest of the body is held to the limit.
 */
export function readJson(c: Ctx, deps: RouteDeps, opts: { images?: boolean } = {}): Promise<Record<string, unknown>> {
  if (!opts.images) return readJsonObject(c.req.raw, deps.maxBodyBytes);
  return readJsonObject(c.req.raw, deps.maxBodyBytes + imageAllowance(deps.limits), deps.maxBodyBytes);
}

/** OpenAI's duration style for x-ratelimit-reset-*: "17ms", "1s", "6m0s", "1h2m3s". */
export function formatReset(ms: number): string {
  if (!(ms > 0)) return '0s';
  if (ms < 1000) return `${Math.ceil(ms)}ms`;
  const total = Math.ceil(ms / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  if (h > 0) return `${h}h${m}m${s}s`;
  if (m > 0) return `${m}m${s}s`;
  return `${s}s`;
}

export function rateHeaders(d: RateDecision): Record<string, string> {
  return {
    'x-ratelimit-limit-requests': String(d.limit),
    'x-ratelimit-remaining-requests': String(Math.max(0, d.remaining)),
    'x-ratelimit-reset-requests': formatReset(d.resetMs),
  };
}

function setHeaders(res: Response, headers: Record<string, string>): void {
  for (const [k, v] of Object.entries(headers)) res.headers.set(k, v);
}

/** A refusal from admit() may not carry the rate headers; fill what can be known. */
function refusalRateHeaders(err: AccessError, p: Principal): Record<string, string> {
  const h = err.headers ?? {};
  const out: Record<string, string> = {};
  if (!h['x-ratelimit-limit-requests'] && p.rateLimit != null) out['x-ratelimit-limit-requests'] = String(p.rateLimit);
  if (!h['x-ratelimit-remaining-requests']) out['x-ratelimit-remaining-requests'] = '0';
  const retry = Number(h['retry-after']);
  if (!h['x-ratelimit-reset-requests'] && Number.isFinite(retry)) out['x-ratelimit-reset-requests'] = formatReset(retry * 1000);
  return out;
}

/** The key a request carries: `Authorization: Bearer`, or else, on an Anthropic request
 * (messages/client.ts), `x-api-key` (the header Anthropic's API reads, and what @ai-sdk/anthropic
 * and Anthropic's SDK before 1.0 send), read as the same bearer key. */
function authorizationOf(c: Ctx): string | null {
  const bearer = c.req.header('authorization');
  if (bearer !== undefined) return bearer;
  const key = isAnthropicRequest(c.req) ? c.req.header('x-api-key') : undefined;
  return key === undefined ? null : `Bearer ${key}`;
}

/** authenticate → admit → checkQuota, then the route; rate headers go on whatever it answers. */
export function requireAccess(runtime: Runtime): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    const requestId = c.get('requestId');
    let principal: Principal;
    try {
      principal = await runtime.access.authenticate(authorizationOf(c));
    } catch (err) {
      return errorToResponse(err, requestId);
    }
    let decision: RateDecision;
    try {
      decision = await runtime.access.admit(principal);
    } catch (err) {
      const res = errorToResponse(err, requestId);
      if (err instanceof AccessError && err.status === 429) setHeaders(res, refusalRateHeaders(err, principal));
      return res;
    }
    const limits = rateHeaders(decision);
    try {
      await runtime.access.checkQuota(principal);
    } catch (err) {
      const res = errorToResponse(err, requestId);
      setHeaders(res, limits);
      return res;
    }
    // The charge's ledger line carries the request id (an audit can spot a double charge).
    c.set('principal', { ...principal, requestId });
    await next();
    setHeaders(c.res, limits);
  };
}

export type TaskUse = 'chat' | 'text' | 'embedding' | 'rerank' | 'tokens' | 'transcription';

const SERVES: Record<TaskUse, ModelTask[]> = {
  chat: ['chat'],
  text: ['chat', 'completion'],
  embedding: ['embedding'],
  rerank: ['rerank'],
  tokens: ['chat', 'completion', 'embedding', 'rerank'],
  transcription: ['transcription'],
};

const WHAT: Record<TaskUse, string> = {
  chat: 'chat completions',
  text: 'text completions',
  embedding: 'embeddings',
  rerank: 'reranking or scores',
  tokens: 'tokenization',
  transcription: 'audio transcriptions or translations',
};

const article = (word: string) => (/^[aeiou]/.test(word) ? 'an' : 'a');

/** The model named in a request, refused when it cannot serve this kind of request or is not up
 * (`param`: the request field blamed for the first, such as `tools` on an embedding model). */
export async function resolveModel(runtime: Runtime, id: string, use: TaskUse, param = 'model'): Promise<ModelState> {
  const models = await runtime.engine.models();
  const m = models.find((x) => x.id === id);
  if (!m) throw modelNotFound(id);
  if (!SERVES[use].includes(m.task)) {
    throw invalidRequest(`The model \`${id}\` is ${article(m.task)} ${m.task} model and does not serve ${WHAT[use]}.`, param);
  }
  if (m.status === 'failed') throw modelFailed(id, m.detail);
  // Unloaded (on demand, or after its keep-alive): load it and wait, within the engine's load
  // timeout, so a stream's headers go out once the model is ready. Access was checked once before.
  if ((m.status === 'unloaded' || m.status === 'loading') && runtime.engine.loadModel) {
    const loaded = await runtime.engine.loadModel(id);
    if (loaded.status === 'failed') throw modelFailed(id, loaded.detail);
    if (loaded.status === 'ready') return loaded;
    throw modelNotReady(id, 1, `is ${loaded.status}`);
  }
  if (m.status !== 'ready') throw modelNotReady(id, 1, m.detail ? `is ${m.status} (${m.detail})` : undefined);
  return m;
}

/** The default model for /generate: the first chat model, else the first completion model. */
export async function defaultTextModel(runtime: Runtime): Promise<string> {
  const models = await runtime.engine.models();
  const m = models.find((x) => x.task === 'chat') ?? models.find((x) => x.task === 'completion');
  if (!m) throw new ApiError(404, 'invalid_request_error', 'model_not_found', 'No chat model is being served.', 'model');
  return m.id;
}
