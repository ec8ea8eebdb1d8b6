// Reranks and scores on a real `hearth serve` (file store) are charged as embeddings are: every
// pair's tokens at the catalog's input price, shown by `hearth usage`; a sandbox account whose
// cap the pairs could pass is refused before anything is scored; a rerank is one request for
// the rate limit whatever its documents; and /metrics (behind --metrics-key) counts the pairs
// scored and their prompt tokens.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultCatalogFile } from '../../src/paths.js';
import { fixtures } from '../helpers/fixtures.js';
import { createKey, hearth, startServer, waitReady, type TestServer } from '../helpers/server.js';

const MODEL = 'svc/tiny-rerank';
const METRICS_KEY = 'metrics-secret';
// 1e-6 USD is 50 tokens at tiny-rerank's 0.02 USD per 1M: a short pair fits, forty documents do not.
const SANDBOX_CAP_USD = 0.000001;

let server: TestServer;

beforeAll(async () => {
  await fixtures();
  server = await startServer(['--models', MODEL, '--metrics-key', METRICS_KEY, '--sandbox-cap-usd', String(SANDBOX_CAP_USD)]);
  await waitReady(server.url);
}, 120_000);

afterAll(async () => {
  expect(await server?.stop()).toBe(0);
});

const send = (p: string, body: unknown, key: string) =>
  fetch(`${server.url}${p}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

async function ok(p: string, body: unknown, key: string): Promise<{ json: Record<string, any>; requestId: string }> {
  const res = await send(p, body, key);
  const json = (await res.json()) as Record<string, any>;
  expect(res.status, JSON.stringify(json)).toBe(200);
  return { json, requestId: res.headers.get('x-request-id')! };
}

const ledger = () =>
  fs
    .readFileSync(path.join(server.dataDir, 'access.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, any>)
    .filter((r) => r.t === 'usage');

const usageOf = async (name: string) =>
  (JSON.parse(await hearth(['usage', '--json', '--data-dir', server.dataDir])) as Array<Record<string, any>>).find((u) => u.name === name);

/** The model's counters on /metrics: pairs scored and prompt tokens. */
async function counters(): Promise<{ pairs: number; promptTokens: number }> {
  const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_KEY}` } });
  expect(res.status).toBe(200);
  const text = await res.text();
  const read = (name: string) => Number(new RegExp(`^${name}\\{model="${MODEL}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
  return { pairs: read('hearth_scored_pairs_total'), promptTokens: read('hearth_prompt_tokens_total') };
}

const QUERY = 'Which river runs through Paris?';
const DOCS = ['The Seine runs through Paris.', 'The Thames runs through London.', 'Rivers carry water to the sea.', 'Stones', 'A garden in winter.'];
const price = (JSON.parse(fs.readFileSync(defaultCatalogFile(), 'utf8')) as { models: Array<{ id: string; price: { input_per_1m: number } }> }).models.find((m) => m.id === MODEL)!.price.input_per_1m;

describe('charging reranks and scores', () => {
  it("charges every pair's tokens at the catalog's price, top_n or not, and hearth usage shows each request", async () => {
    const key = await createKey(server.dataDir, ['--name', 'payer']);
    const rerank = await ok('/v1/rerank', { model: MODEL, query: QUERY, documents: DOCS, top_n: 1 }, key);
    const score = await ok('/v1/score', { model: MODEL, text_1: QUERY, text_2: DOCS.slice(0, 3) }, key);
    const v2 = await ok('/v2/rerank', { model: MODEL, query: QUERY, documents: DOCS }, key);
    // top_n cuts the results, not the work: the same pairs as the full rerank.
    const full = await ok('/v1/rerank', { model: MODEL, query: QUERY, documents: DOCS }, key);
    expect(rerank.json.usage.prompt_tokens).toBe(full.json.usage.prompt_tokens);
    const tokens = [rerank.json.usage.prompt_tokens, score.json.usage.prompt_tokens, full.json.usage.prompt_tokens, full.json.usage.prompt_tokens];

    const lines = ledger();
    for (const [i, r] of [rerank, score, v2, full].entries()) {
      const line = lines.find((l) => l.request_id === r.requestId);
      expect(line, `request ${i}`).toMatchObject({ model: MODEL, prompt_tokens: tokens[i], completion_tokens: 0 });
      expect(line!.cost_usd).toBeCloseTo((tokens[i]! * price) / 1e6, 15);
    }
    const total = tokens.reduce((a, b) => a + b, 0);
    const usage = await usageOf('payer');
    expect(usage).toMatchObject({ requests: 4, prompt_tokens: total, completion_tokens: 0 });
    expect(usage!.spend_usd).toBeCloseTo((total * price) / 1e6, 12);
    expect(price).toBeGreaterThan(0);
  });

  it('refuses a sandbox request whose pairs could pass its cap with 429 insufficient_quota, before any scoring', async () => {
    const key = await createKey(server.dataDir, ['--name', 'capped', '--sandbox', '--rate-limit', '100']);
    const small = await ok('/v1/rerank', { model: MODEL, query: 'q', documents: ['x'] }, key);
    expect(small.json.usage.prompt_tokens * price * 1e-6).toBeLessThan(SANDBOX_CAP_USD);
    const before = { lines: ledger().length, ...(await counters()) };

    const documents = Array.from({ length: 40 }, (_, i) => `Document ${i}: the river ran past the stone garden in winter, and the market by the window was quiet.`);
    const bodies = [
      ['/v1/rerank', { model: MODEL, query: QUERY, documents }],
      ['/rerank', { model: MODEL, query: QUERY, documents, top_n: 1 }],
      ['/v2/rerank', { model: MODEL, query: QUERY, documents }],
      ['/v1/score', { model: MODEL, text_1: QUERY, text_2: documents }],
    ] as const;
    for (const [p, body] of bodies) {
      const res = await send(p, body, key);
      expect(res.status, p).toBe(429);
      expect(res.headers.get('x-should-retry')).toBe('false');
      expect(((await res.json()) as { error: unknown }).error).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_quota', param: null });
    }
    // Nothing was scored or charged.
    expect({ lines: ledger().length, ...(await counters()) }).toEqual(before);
    expect(await usageOf('capped')).toMatchObject({ sandbox: true, requests: 1, prompt_tokens: small.json.usage.prompt_tokens });
    // What was refused was those pairs, not the account: a short pair still fits.
    await ok('/v1/score', { model: MODEL, text_1: 'q', text_2: 'x' }, key);
  });

  it('takes one slot of the rate limit for a rerank or a score, whatever its documents', async () => {
    const key = await createKey(server.dataDir, ['--name', 'counter', '--rate-limit', '3']);
    const documents = Array.from({ length: 50 }, (_, i) => `Document ${i}`);
    const seen = [];
    for (const [p, body] of [
      ['/v1/rerank', { model: MODEL, query: QUERY, documents }],
      ['/v1/score', { model: MODEL, text_1: QUERY, text_2: documents }],
      ['/v2/rerank', { model: MODEL, query: QUERY, documents }],
    ] as const) {
      const res = await send(p, body, key);
      expect(res.status, p).toBe(200);
      seen.push([res.headers.get('x-ratelimit-limit-requests'), res.headers.get('x-ratelimit-remaining-requests')]);
    }
    expect(seen).toEqual([
      ['3', '2'],
      ['3', '1'],
      ['3', '0'],
    ]);
    const refused = await send('/rerank', { model: MODEL, query: QUERY, documents: ['x'] }, key);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBeTruthy();
    expect(((await refused.json()) as { error: unknown }).error).toMatchObject({ code: 'rate_limit_exceeded' });
  });
});

describe('/metrics', () => {
  it('is behind --metrics-key', async () => {
    expect((await fetch(`${server.url}/metrics`)).status).toBe(401);
  });

  it('counts the pairs scored and their prompt tokens, top_n or not', async () => {
    const key = await createKey(server.dataDir, ['--name', 'measured']);
    const before = await counters();
    const rerank = await ok('/v1/rerank', { model: MODEL, query: QUERY, documents: DOCS, top_n: 1 }, key);
    const score = await ok('/v1/score', { model: MODEL, text_1: DOCS.slice(0, 3), text_2: DOCS.slice(2, 5) }, key);
    const after = await counters();
    expect(after.pairs - before.pairs).toBe(DOCS.length + 3);
    expect(after.promptTokens - before.promptTokens).toBe(rerank.json.usage.prompt_tokens + score.json.usage.prompt_tokens);
  });
});
