// Rate limits and spending caps against a real `hearth serve` (file store), over HTTP
// with real clients.

import * as fs from 'node:fs';
import * as path from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, hearth, startServer, waitReady, type TestServer } from '../helpers/server.js';

const chatBody = (content: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ model: 'svc/tiny-chat', messages: [{ role: 'user', content }], temperature: 0, ...extra });

function ledgerLines(dataDir: string): Array<Record<string, unknown>> {
  return fs
    .readFileSync(path.join(dataDir, 'access.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((r) => r.t === 'usage');
}

describe('rate limit on one server', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
    await waitReady(server.url);
  });
  afterAll(async () => {
    expect(await server.stop()).toBe(0);
  });

  it('100 simultaneous requests against the default limit of 60 admit exactly 60', async () => {
    const key = await createKey(server.dataDir, ['--name', 'burst']);
    const headers = { authorization: `Bearer ${key}` };
    const responses = await Promise.all(Array.from({ length: 100 }, () => fetch(`${server.url}/v1/models`, { headers })));
    const ok = responses.filter((r) => r.status === 200);
    const refused = responses.filter((r) => r.status === 429);
    console.log(`one server, limit 60: ${ok.length} admitted, ${refused.length} refused (of 100 simultaneous)`);
    expect(ok).toHaveLength(60);
    expect(refused).toHaveLength(40);
    expect(ok.map((r) => Number(r.headers.get('x-ratelimit-remaining-requests'))).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 60 }, (_, i) => i),
    );
    for (const r of refused) {
      expect(r.headers.get('x-ratelimit-limit-requests')).toBe('60');
      expect(r.headers.get('x-ratelimit-remaining-requests')).toBe('0');
      expect(r.headers.get('x-ratelimit-reset-requests')).toMatch(/^(\d+(\.\d+)?s|\d+ms)$/);
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(r.headers.get('x-request-id')).toBeTruthy();
      expect(((await r.json()) as { error: unknown }).error).toMatchObject({ type: 'requests', code: 'rate_limit_exceeded', param: null });
    }
    // /health is free: still answered, and it takes no slot.
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
  }, 180_000);

  it('a per-key limit overrides the server default; a stream counts once and is charged once', async () => {
    const key = await createKey(server.dataDir, ['--name', 'streamer', '--rate-limit', '3']);
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const before = ledgerLines(server.dataDir).length;
    const stream = await fetch(`${server.url}/v1/chat/completions`, { method: 'POST', headers, body: chatBody('Stream me', { stream: true }) });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('x-ratelimit-limit-requests')).toBe('3');
    expect(stream.headers.get('x-ratelimit-remaining-requests')).toBe('2');
    expect(await stream.text()).toContain('data: [DONE]');
    expect(ledgerLines(server.dataDir).length).toBe(before + 1);
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await fetch(`${server.url}/v1/models`, { headers })).status);
    expect(statuses).toEqual([200, 200, 429]);
  }, 180_000);
});

describe('spending cap on a real server', () => {
  let server: TestServer;
  // A chat request with max_tokens 5 holds its prompt (counted: a few dozen tokens) × 0.1
  // + 5 × 0.4 per 1M and costs that much at most: a cap of 2.1e-4 lets it start, and after
  // it no request whose most possible cost is larger than what is left.
  beforeAll(async () => {
    server = await startServer(['--sandbox-cap-usd', '0.00021']);
    await waitReady(server.url);
  });
  afterAll(async () => {
    expect(await server.stop()).toBe(0);
  });

  it('refuses a request that could take a sandbox account past its cap with 429 insufficient_quota before any inference, and the SDK does not retry', async () => {
    const key = await createKey(server.dataDir, ['--name', 'capped', '--sandbox', '--rate-limit', '100']);
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const first = await fetch(`${server.url}/v1/chat/completions`, { method: 'POST', headers, body: chatBody('Spend a little', { max_tokens: 5 }) });
    expect(first.status).toBe(200);
    const lines = ledgerLines(server.dataDir).length;

    for (const p of ['/v1/chat/completions', '/v1/completions', '/v1/embeddings', '/generate']) {
      // No max_tokens: the context the prompt leaves (8.2e-4 USD); 30 inputs of 512 tokens at 0.02
      // (3.1e-4); /generate with 1000 new tokens (4e-4).
      const body =
        p === '/v1/embeddings'
          ? JSON.stringify({ model: 'svc/tiny-embed', input: Array.from({ length: 30 }, () => Array<number>(512).fill(5)) })
          : p === '/generate'
            ? JSON.stringify({ text: 'x', sampling_params: { max_new_tokens: 1000 } })
            : p === '/v1/completions'
              ? JSON.stringify({ model: 'svc/tiny-chat', prompt: 'x' })
              : chatBody('More');
      const res = await fetch(`${server.url}${p}`, { method: 'POST', headers, body });
      expect(res.status, p).toBe(429);
      expect(res.headers.get('x-should-retry')).toBe('false');
      expect(((await res.json()) as { error: unknown }).error).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_quota', param: null });
    }
    // Refused before inference: nothing was charged.
    expect(ledgerLines(server.dataDir).length).toBe(lines);

    // The openai SDK (maxRetries 2) honours x-should-retry: false: one attempt only.
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: key, maxRetries: 2 });
    const err = await client.chat.completions.create({ model: 'svc/tiny-chat', messages: [{ role: 'user', content: 'again' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect((err as InstanceType<typeof OpenAI.RateLimitError>).code).toBe('insufficient_quota');
    // Slots used so far: 1 served + 4 refused + 1 SDK attempt; this request is the 7th.
    const probe = await fetch(`${server.url}/v1/models`, { headers });
    expect(probe.headers.get('x-ratelimit-remaining-requests')).toBe(String(100 - 7));
    expect(ledgerLines(server.dataDir).length).toBe(lines);

    const usage = JSON.parse(await hearth(['usage', '--json', '--data-dir', server.dataDir])) as Array<Record<string, unknown>>;
    expect(usage.find((u) => u.name === 'capped')).toMatchObject({ sandbox: true, requests: 1 });

    // Accounts that are not sandboxes are never capped.
    const free = await createKey(server.dataDir, ['--name', 'paying']);
    for (let i = 0; i < 2; i++) {
      const r = await fetch(`${server.url}/v1/chat/completions`, { method: 'POST', headers: { ...headers, authorization: `Bearer ${free}` }, body: chatBody(`Paid ${i}`) });
      expect(r.status).toBe(200);
    }
  }, 180_000);
});
