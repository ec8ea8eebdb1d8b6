// Rerank and score through hearth/msw, with raw fetch: `<baseURL>/rerank` (and /rerank beside
// the base URL, as vLLM serves it beside /v1), `<baseURL>/score` (/v1/score), and Cohere's v2 path at its
// origin (`https://api.cohere.com/v2/rerank`, handlers made with that base URL) answer the same
// scores and usage as a real `hearth serve` for the same pairs, and a chat model is refused in
// the error envelope.
import { setupServer } from 'msw/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hearthHandlers, type HearthHandlers } from '../../src/front/msw/index.js';
import { fixtures } from '../helpers/fixtures.js';
import { createKey, startServer, waitReady } from '../helpers/server.js';

const MODEL = 'svc/tiny-rerank';
const baseURL = 'https://api.example.test/v1';
const cohereURL = 'https://api.cohere.com';
const apiKey = `svc_live_${'a1B2'.repeat(8)}`;

const QUERY = 'What is the capital of France?';
const DOCS = [
  'The capital of France is Paris.',
  'A small bird sang in the tree near the house.',
  'Paris',
  'Café au lait, s’il vous plaît 😀 and a much longer second text about rivers, stones and the weather this week.',
  'x',
];
const RERANK = { model: MODEL, query: QUERY, documents: DOCS };
const SCORE = { model: MODEL, text_1: [QUERY, 'Where is Paris?', 'x'], text_2: [DOCS[0], DOCS[2], DOCS[1]] };

type Json = Record<string, any>;
const post = async (url: string, body: unknown, key = apiKey): Promise<{ status: number; body: Json }> => {
  const res = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Json };
};

/** The Node server's answers to the same requests, read before MSW intercepts fetch. */
let node: { rerank: Json; score: Json; v2: Json };
let handlers: HearthHandlers[] = [];
let msw: ReturnType<typeof setupServer>;

beforeAll(async () => {
  await fixtures();
  const server = await startServer(['--models', MODEL]);
  try {
    const key = await createKey(server.dataDir);
    await waitReady(server.url);
    const ok = async (p: string, body: unknown) => {
      const r = await post(`${server.url}${p}`, body, key);
      expect(r.status).toBe(200);
      return r.body;
    };
    node = { rerank: await ok('/v1/rerank', RERANK), score: await ok('/v1/score', SCORE), v2: await ok('/v2/rerank', { ...RERANK, top_n: 3 }) };
  } finally {
    expect(await server.stop()).toBe(0);
  }
  handlers = [await hearthHandlers({ baseURL, models: [MODEL, 'svc/tiny-chat'] }), await hearthHandlers({ baseURL: cohereURL, models: [MODEL] })];
  msw = setupServer(...handlers.flat());
  msw.listen({ onUnhandledFrame: 'error' });
}, 180_000);

afterAll(async () => {
  msw?.close();
  await Promise.all(handlers.map((h) => h.close()));
});

/** Results equal, scores within float noise of one another (two processes, the same graph and batches). */
function sameResults(got: { index: number; relevance_score: number }[], want: { index: number; relevance_score: number }[]): void {
  expect(got.map((r) => r.index)).toEqual(want.map((r) => r.index));
  got.forEach((r, i) => expect(Math.abs(r.relevance_score - want[i]!.relevance_score)).toBeLessThan(1e-6));
}

describe('rerank and score through the MSW handlers', () => {
  it('rank at <baseURL>/rerank and at /rerank beside it as the Node server does', async () => {
    for (const url of [`${baseURL}/rerank`, 'https://api.example.test/rerank']) {
      const { status, body } = await post(url, RERANK);
      expect(status, url).toBe(200);
      expect(body).toMatchObject({ id: expect.stringMatching(/^rerank-/), model: MODEL, usage: node.rerank.usage });
      sameResults(body.results, node.rerank.results);
      for (const r of body.results) expect(r.document).toEqual({ text: DOCS[r.index] });
    }
  });

  it('score pairs at <baseURL>/score as the Node server does', async () => {
    const { status, body } = await post(`${baseURL}/score`, SCORE);
    expect(status).toBe(200);
    expect(body).toMatchObject({ object: 'list', model: MODEL, usage: node.score.usage });
    expect(body.data.map((d: Json) => [d.index, d.object])).toEqual([
      [0, 'score'],
      [1, 'score'],
      [2, 'score'],
    ]);
    body.data.forEach((d: Json, i: number) => expect(Math.abs(d.score - node.score.data[i].score)).toBeLessThan(1e-6));
  });

  it("answer Cohere's v2 client at https://api.cohere.com/v2/rerank in Cohere's shape", async () => {
    const { status, body } = await post(`${cohereURL}/v2/rerank`, { ...RERANK, top_n: 3 });
    expect(status).toBe(200);
    expect(Object.keys(body).sort()).toEqual(['id', 'meta', 'results']);
    expect(body.meta).toEqual({ billed_units: { search_units: 1 } });
    for (const r of body.results) expect(Object.keys(r).sort()).toEqual(['index', 'relevance_score']);
    sameResults(body.results, node.v2.results);
  });

  it('refuse a chat model in the error envelope, naming model and its task', async () => {
    for (const [url, body] of [
      [`${baseURL}/rerank`, { ...RERANK, model: 'svc/tiny-chat' }],
      [`${baseURL}/score`, { ...SCORE, model: 'svc/tiny-chat' }],
    ] as const) {
      const r = await post(url, body);
      expect(r.status, url).toBe(400);
      expect(r.body.error).toMatchObject({ type: 'invalid_request_error', param: 'model', code: 'invalid_value', message: expect.stringContaining('chat model') });
    }
    const unknown = await post(`${cohereURL}/v2/rerank`, { ...RERANK, model: 'svc/nope' });
    expect([unknown.status, unknown.body.error?.param, unknown.body.error?.code]).toEqual([404, 'model', 'model_not_found']);
    expect((await post(`${baseURL}/rerank`, RERANK, 'sk-123')).status).toBe(401);
  });
});
