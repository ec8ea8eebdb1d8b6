// forward(): which URL gets a request, what happens when one fails before the first
// byte, and how upstream failures become Hearth's errors. The transport stands in
// for the network, so each failure can be produced on cue.
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/api/errors.js';
import { forward, type ForwardDeps } from '../../src/upstream/forward.js';
import { UpstreamPool } from '../../src/upstream/pool.js';
import type { Transport, UpstreamCall } from '../../src/upstream/types.js';

const refused = () => Promise.reject(Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } }));
const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  Promise.resolve(new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } }));

function setup(
  urls: string[],
  answer: (url: string, init: RequestInit) => Promise<Response>,
  env: Record<string, string> = { UP_KEY: 'sk-upstream-secret' },
  timeout_ms?: number,
) {
  const pool = new UpstreamPool('svc/big', { urls, model: 'org/Big-70B', api_key_env: 'UP_KEY', timeout_ms });
  for (const t of pool.targets) t.healthy = true;
  const seen: { url: string; auth: string | null; body: unknown }[] = [];
  const calls: UpstreamCall[] = [];
  const transport: Transport = (url, init) => {
    seen.push({ url, auth: new Headers(init.headers).get('authorization'), body: JSON.parse(String(init.body)) });
    return answer(url, init);
  };
  const deps: ForwardDeps = { transport, key: (n) => env[n], observer: { call: (c) => calls.push(c) } };
  return { pool, deps, seen, calls };
}

async function failure(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

describe('forward', () => {
  it('spreads requests over the healthy URLs with the upstream key', async () => {
    const { pool, deps, seen } = setup(['http://a/v1', 'http://b/v1'], () => json(200, { ok: true }));
    for (let i = 0; i < 4; i++) await forward(pool, '/chat/completions', { model: 'org/Big-70B' }, deps);
    expect(seen.map((s) => s.url)).toEqual(['http://a/v1/chat/completions', 'http://b/v1/chat/completions', 'http://a/v1/chat/completions', 'http://b/v1/chat/completions']);
    expect(seen.every((s) => s.auth === 'Bearer sk-upstream-secret')).toBe(true);
  });

  it('fails over from a refused connection and takes that URL out of the rotation', async () => {
    const { pool, deps, seen, calls } = setup(['http://a/v1', 'http://b/v1'], (url) => (url.startsWith('http://a') ? refused() : json(200, {})));
    const res = await forward(pool, '/completions', {}, deps);
    expect(res.status).toBe(200);
    expect(seen.map((s) => s.url)).toEqual(['http://a/v1/completions', 'http://b/v1/completions']);
    expect(pool.targets[0]!.healthy).toBe(false);
    expect(calls.map((c) => c.ok)).toEqual([false, true]);
    await forward(pool, '/completions', {}, deps);
    expect(seen).toHaveLength(3);
  });

  it('tries the next URL after a 5xx, and answers 502 upstream_error when every URL fails', async () => {
    const { pool, deps, seen } = setup(['http://a/v1', 'http://b/v1'], () => json(500, { error: { message: 'boom' } }));
    const err = await failure(forward(pool, '/completions', {}, deps));
    expect(seen).toHaveLength(2);
    expect(err).toMatchObject({ status: 502, type: 'server_error', code: 'upstream_error' });
    expect(err.message).toContain('answered 500');
  });

  it('passes a 4xx through with its fields, the upstream model name replaced by Hearth id', async () => {
    const { pool, deps, seen } = setup(['http://a/v1', 'http://b/v1'], () =>
      json(400, { error: { message: "This model's maximum context length is 8192 (org/Big-70B)", type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' } }),
    );
    const err = await failure(forward(pool, '/chat/completions', {}, deps));
    expect(seen).toHaveLength(1);
    expect(err).toMatchObject({ status: 400, param: 'messages', code: 'context_length_exceeded' });
    expect(err.message).toContain('(svc/big)');
  });

  it('keeps retry-after on an upstream 429', async () => {
    const { pool, deps } = setup(['http://a/v1'], () => json(429, { error: { message: 'slow down', type: 'requests', code: 'rate_limit_exceeded' } }, { 'retry-after': '7' }));
    const err = await failure(forward(pool, '/chat/completions', {}, deps));
    expect(err).toMatchObject({ status: 429, headers: { 'retry-after': '7' } });
  });

  it('answers 502 when the upstream refuses the key, and never shows the key', async () => {
    const { pool, deps } = setup(['http://a/v1'], () => json(401, { error: { message: 'Incorrect API key provided: sk-upstream-secret' } }));
    const err = await failure(forward(pool, '/chat/completions', {}, deps));
    expect(err).toMatchObject({ status: 502, code: 'upstream_error' });
    expect(err.message).not.toContain('sk-upstream-secret');
  });

  it('names the missing key variable, not a value, when it is not set', async () => {
    const { pool, deps, seen } = setup(['http://a/v1'], () => json(200, {}), {});
    const err = await failure(forward(pool, '/chat/completions', {}, deps));
    expect(err.message).toContain('UP_KEY');
    expect(seen).toHaveLength(0);
  });

  it('answers 502 when the headers do not come in time, keeping the URL in the rotation', async () => {
    const hang = (_url: string, init: RequestInit) =>
      new Promise<Response>((_, reject) => init.signal!.addEventListener('abort', () => reject(init.signal!.reason)));
    const { pool, deps } = setup(['http://a/v1'], hang, undefined, 50);
    const err = await failure(forward(pool, '/chat/completions', {}, deps));
    expect(err).toMatchObject({ status: 502, code: 'upstream_error' });
    expect(err.message).toContain('timed out');
    expect(pool.targets[0]!.healthy).toBe(true);
  });

  it('does not cut a reply that streams past the headers timeout', async () => {
    // As fetch does, the request's signal aborting also errors the body.
    const slowBody = (signal: AbortSignal) => {
      const enc = new TextEncoder();
      return new ReadableStream<Uint8Array>({
        async start(c) {
          signal.addEventListener('abort', () => c.error(signal.reason));
          for (let i = 0; i < 3; i++) {
            await new Promise((r) => setTimeout(r, 40));
            c.enqueue(enc.encode(`part${i};`));
          }
          c.close();
        },
      });
    };
    const { pool, deps } = setup(['http://a/v1'], (_url, init) => Promise.resolve(new Response(slowBody(init.signal!))), undefined, 50);
    const res = await forward(pool, '/chat/completions', {}, deps);
    expect(await res.text()).toBe('part0;part1;part2;');
  });

  it('answers 502 at once when no URL is healthy', async () => {
    const { pool, deps, seen } = setup(['http://a/v1'], () => json(200, {}));
    pool.targets[0]!.healthy = false;
    expect(await failure(forward(pool, '/chat/completions', {}, deps))).toMatchObject({ status: 502 });
    expect(seen).toHaveLength(0);
  });
});
