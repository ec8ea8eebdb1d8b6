// The router with the real access layer (file store) over a stub engine: a request
// whose most possible cost does not fit under the cap, or that would start at or over
// it, never reaches the engine and adds no charge;
// the cap comes back at the UTC month boundary of the injected clock; every charge's
// ledger line carries the x-request-id of the response it paid for.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createAccess } from '../../src/access/access.js';
import { openFileStore } from '../../src/access/file-store.js';
import { createRouter } from '../../src/api/router.js';
import type { Runtime } from '../../src/types.js';
import { StubEngine, stubCatalog } from '../api/stub-engine.js';
import { tempDir } from './helpers.js';

describe('the router and the spending cap', () => {
  it('refuses before inference at the cap, charges nothing, and resets at the month boundary', async () => {
    const dir = tempDir();
    let t = Date.UTC(2026, 0, 31, 23, 59, 0);
    const access = createAccess({ store: openFileStore(dir), sandboxCapUsd: 0.0003, now: () => t });
    const engine = new StubEngine();
    const runtime: Runtime = { engine, access, catalog: stubCatalog, close: async () => {} };
    const app = createRouter(runtime);
    const { key } = await access.createKey({ name: 'sb', sandbox: true });
    const post = (p: string, body: unknown, id: string) =>
      app.fetch(
        new Request(`http://hearth.test${p}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-request-id': id },
          body: JSON.stringify(body),
        }),
      );
    const chat = { model: 'svc/tiny-chat', messages: [{ role: 'user', content: 'hi there' }] };

    // Its most possible cost (its 6 prompt tokens × 0.1 + 2 × 0.4 per 1M) fits: served.
    const first = await post('/v1/chat/completions', { ...chat, max_tokens: 2 }, 'req-first');
    expect(first.status).toBe(200);
    expect(engine.calls).toHaveLength(1);
    const spent = (await access.usageThisMonth())[0]!;
    expect(spent.spend_usd).toBeGreaterThan(0);

    // Requests whose most possible cost would not fit: refused, no engine call, no charge.
    const refusedAll = async (id: string) => {
      for (const [p, body] of [
        ['/v1/chat/completions', chat], // no max_tokens: the whole context, 2047 × 0.4 per 1M
        ['/v1/chat/completions', { ...chat, stream: true }],
        ['/v1/completions', { model: 'svc/tiny-chat', prompt: 'x' }],
        ['/v1/embeddings', { model: 'svc/tiny-embed', input: Array.from({ length: 10 }, () => Array<number>(512).fill(5)) }], // 10 × 512 tokens
        ['/generate', { text: 'x', sampling_params: { max_new_tokens: 2000 } }],
      ] as const) {
        const res = await post(p, body, id);
        expect(res.status, p).toBe(429);
        expect(res.headers.get('x-should-retry')).toBe('false');
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe('insufficient_quota');
      }
    };
    await refusedAll('req-refused');
    expect(engine.calls).toHaveLength(1);
    expect(engine.embedCalls).toHaveLength(0);
    expect((await access.usageThisMonth())[0]).toEqual(spent);

    // At or over the cap, even the smallest request is refused.
    const p = await access.authenticate(`Bearer ${key}`);
    await access.record(p, { model: 'svc/tiny-chat', prompt_tokens: 0, completion_tokens: 0, cost_usd: 0.0003 });
    expect((await post('/v1/chat/completions', { ...chat, max_tokens: 1 }, 'req-over')).status).toBe(429);
    expect(engine.calls).toHaveLength(1);

    // February (UTC): a new month, a new budget.
    t = Date.UTC(2026, 1, 1, 0, 0, 0);
    expect((await post('/v1/chat/completions', { ...chat, max_tokens: 2 }, 'req-february')).status).toBe(200);
    expect(engine.calls).toHaveLength(2);

    const charges = fs
      .readFileSync(path.join(dir, 'access.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { t: string; request_id?: string; ts: number })
      .filter((r) => r.t === 'usage' && r.request_id);
    expect(charges.map((c) => c.request_id)).toEqual(['req-first', 'req-february']);
    expect(new Date(charges[1]!.ts).toISOString()).toBe('2026-02-01T00:00:00.000Z');
    await access.close();
  });
});
