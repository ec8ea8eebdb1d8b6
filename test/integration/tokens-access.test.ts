// /tokenize and /detokenize on a real `hearth serve` are keyed and rate limited like every
// route (one request each), and nothing is charged for them or recorded as usage.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtures } from '../helpers/fixtures.js';
import { createKey, hearth, startServer, waitReady, type TestServer } from '../helpers/server.js';

let server: TestServer;

beforeAll(async () => {
  await fixtures();
  server = await startServer(['--models', 'svc/tiny-chat']);
  await waitReady(server.url);
}, 120_000);

afterAll(async () => {
  expect(await server?.stop()).toBe(0);
});

const usageLines = () =>
  fs
    .readFileSync(path.join(server.dataDir, 'access.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .filter((l) => (JSON.parse(l) as { t?: string }).t === 'usage').length;

const send = (p: string, body: unknown, key?: string) =>
  fetch(`${server.url}${p}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify(body),
  });

const TOKENIZE = { model: 'svc/tiny-chat', messages: [{ role: 'user', content: 'Hello!' }] };
const DETOKENIZE = { model: 'svc/tiny-chat', tokens: [72, 105] };

describe('access to /tokenize and /detokenize', () => {
  it('refuses a request with no key, or one that is not a key, with 401', async () => {
    for (const [p, body] of [['/tokenize', TOKENIZE], ['/detokenize', DETOKENIZE]] as const) {
      for (const key of [undefined, 'sk-not-ours']) {
        const res = await send(p, body, key);
        expect(res.status, `${p} ${key}`).toBe(401);
        expect(((await res.json()) as { error: unknown }).error).toMatchObject({ code: 'invalid_api_key' });
      }
    }
  });

  it('takes one slot of the rate limit each, and refuses past it with 429', async () => {
    const key = await createKey(server.dataDir, ['--name', 'counter', '--rate-limit', '3']);
    const a = await send('/tokenize', TOKENIZE, key);
    const b = await send('/detokenize', DETOKENIZE, key);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect([a, b].map((r) => [r.headers.get('x-ratelimit-limit-requests'), r.headers.get('x-ratelimit-remaining-requests')])).toEqual([
      ['3', '2'],
      ['3', '1'],
    ]);
    expect((await send('/tokenize', TOKENIZE, key)).status).toBe(200);
    const refused = await send('/detokenize', DETOKENIZE, key);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBeTruthy();
    expect(((await refused.json()) as { error: unknown }).error).toMatchObject({ code: 'rate_limit_exceeded' });
  });

  it('charges nothing and records no usage, for a sandbox account too', async () => {
    const key = await createKey(server.dataDir, ['--name', 'sandboxed', '--sandbox']);
    const before = usageLines();
    for (let i = 0; i < 3; i++) {
      expect((await send('/tokenize', { ...TOKENIZE, messages: [{ role: 'user', content: `Hello ${i}` }] }, key)).status).toBe(200);
      expect((await send('/detokenize', DETOKENIZE, key)).status).toBe(200);
    }
    expect(usageLines()).toBe(before);
    const usage = JSON.parse(await hearth(['usage', '--json', '--data-dir', server.dataDir])) as Array<Record<string, unknown>>;
    const row = usage.find((u) => u.name === 'sandboxed');
    expect([row?.requests ?? 0, row?.prompt_tokens ?? 0, row?.spend_usd ?? 0]).toEqual([0, 0, 0]);
  });
});
