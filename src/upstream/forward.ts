// Sends one request to an upstream model: the healthy URLs in turn, failing over
// to the next when one cannot be reached or answers 5xx before any byte of a
// reply; the caller's key never leaves Hearth, the upstream's own goes instead.
import type { ApiError } from '../api/errors.js';
import { fromUpstreamResponse, networkReason, upstreamError } from './errors.js';
import type { UpstreamPool } from './pool.js';
import type { Transport, UpstreamObserver } from './types.js';

export const DEFAULT_TIMEOUT_MS = 30_000;

export interface ForwardDeps {
  transport: Transport;
  /** The upstream key named by the spec's api_key_env (undefined: send none). */
  key(envName: string): string | undefined;
  observer?: UpstreamObserver;
}

/** Headers for a call to the upstream: its own key, if it has one. */
export function upstreamHeaders(pool: UpstreamPool, deps: ForwardDeps): Record<string, string> {
  const h: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const env = pool.spec.api_key_env;
  if (env) {
    const key = deps.key(env);
    if (!key) throw upstreamError(pool.id, `the upstream key variable ${env} is not set on this server`);
    h.authorization = `Bearer ${key}`;
  }
  return h;
}

/**
 * POSTs `body` to `path` (relative to each URL, e.g. "/chat/completions") and
 * resolves with the first 2xx Response, its body unread. `signal` is the caller's:
 * when it goes away the upstream request is aborted too.
 */
export async function forward(pool: UpstreamPool, path: string, body: unknown, deps: ForwardDeps, signal?: AbortSignal): Promise<Response> {
  const headers = upstreamHeaders(pool, deps);
  const order = pool.order();
  if (!order.length) throw upstreamError(pool.id, 'no upstream URL is healthy');
  // A multipart form (an audio upload) goes as its encoded bytes, boundary and all: a transport's
  // fetch (undici's package) need not know this runtime's FormData class.
  let payload: string | Uint8Array<ArrayBuffer>;
  if (body instanceof FormData) {
    const encoded = new Response(body);
    headers['content-type'] = encoded.headers.get('content-type')!;
    payload = new Uint8Array(await encoded.arrayBuffer());
  } else payload = JSON.stringify(body);
  let last: ApiError | undefined;
  for (const target of order) {
    if (signal?.aborted) break;
    // Only the wait for the response headers is timed: a long stream must not be cut.
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(new DOMException('upstream headers timed out', 'TimeoutError')), pool.spec.timeout_ms ?? DEFAULT_TIMEOUT_MS);
    const started = performance.now();
    const done = (ok: boolean, why?: string) => {
      const ms = performance.now() - started;
      target.recordCall(ms, ok, why);
      deps.observer?.call({ model: pool.id, url: target.shown, ms, ok });
    };
    let res: Response;
    try {
      res = await deps.transport(target.base + path, {
        method: 'POST',
        headers,
        body: payload,
        signal: signal ? AbortSignal.any([signal, timeout.signal]) : timeout.signal,
      });
    } catch (err) {
      if (signal?.aborted) throw err;
      const why = timeout.signal.aborted ? 'timed out' : networkReason(err);
      done(false, why);
      // Unreachable: out of the rotation until a probe finds it again.
      if (why !== 'timed out') target.healthy = false;
      last = upstreamError(pool.id, why);
      continue;
    } finally {
      clearTimeout(timer);
    }
    if (res.ok) {
      done(true);
      return res;
    }
    const refused = res.status >= 500 || res.status === 401 || res.status === 403;
    done(!refused, `answered ${res.status}`);
    const err = await fromUpstreamResponse(res, pool.id, pool.spec.model);
    if (res.status < 500) throw err;
    last = err;
  }
  throw last ?? upstreamError(pool.id, 'the request was cancelled');
}
