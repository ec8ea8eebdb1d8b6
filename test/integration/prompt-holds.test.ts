// A sandbox account's hold is sized by its real prompt, counted with the model's own
// tokenizer and chat template before the hold: under a cap of 0.00003 USD, a chat
// request of a short message and 16 new tokens (about 0.0000084 USD at most) is served,
// where a hold assuming a prompt as long as the context (2,048 tokens: 0.0002 USD)
// refused it. The hold written to the log is exactly prompt × 0.1 + 16 × 0.4 per 1M, the
// prompt being the count the reply reports; a request whose real most possible cost does
// not fit what is left is refused before inference.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, hearth, startServer, waitReady, type TestServer } from '../helpers/server.js';

const CAP = 0.00003;
const PRICE = { input: 0.1, output: 0.4 }; // svc/tiny-chat, per 1M tokens (models/catalog.json)

function logRecords(dataDir: string): Array<{ t: string; amount_usd?: number; request_id?: string }> {
  return fs
    .readFileSync(path.join(dataDir, 'access.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { t: string });
}

describe('holds sized by the real prompt', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer(['--sandbox-cap-usd', String(CAP)]);
    await waitReady(server.url);
  });
  afterAll(async () => {
    expect(await server.stop()).toBe(0);
  });

  it('serves a tiny cap’s first request when its real cost fits, holding exactly its counted prompt', async () => {
    const key = await createKey(server.dataDir, ['--name', 'tiny-cap', '--sandbox']);
    const chat = (max_tokens: number) =>
      fetch(`${server.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'svc/tiny-chat', messages: [{ role: 'user', content: 'Hello there, how are you?' }], max_tokens, temperature: 0 }),
      });

    const first = await chat(16);
    expect(first.status).toBe(200);
    const { usage } = (await first.json()) as { usage: { prompt_tokens: number; completion_tokens: number } };
    const [held] = logRecords(server.dataDir).filter((r) => r.t === 'reserve');
    expect(held!.amount_usd).toBeCloseTo((usage.prompt_tokens * PRICE.input + 16 * PRICE.output) / 1e6, 15);
    expect(held!.amount_usd).toBeLessThan(CAP);

    // 100 new tokens could cost about 0.000042 USD: more than the cap leaves. Refused unrun.
    const second = await chat(100);
    expect(second.status).toBe(429);
    expect(((await second.json()) as { error: { code: string } }).error.code).toBe('insufficient_quota');

    const rows = JSON.parse(await hearth(['usage', '--json', '--data-dir', server.dataDir])) as Array<{ name: string; requests: number; spend_usd: number }>;
    const spent = rows.find((u) => u.name === 'tiny-cap')!;
    expect(spent.requests).toBe(1);
    expect(spent.spend_usd).toBeCloseTo((usage.prompt_tokens * PRICE.input + usage.completion_tokens * PRICE.output) / 1e6, 12);
    expect(spent.spend_usd).toBeLessThanOrEqual(CAP);
  }, 120_000);
});
