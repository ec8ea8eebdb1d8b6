// /v1/rerank, /rerank, /v2/rerank and /v1/score on a real `hearth serve`, over HTTP with raw
// fetch: documents come back best first, each relevance_score is the /v1/score of its pair on
// the same server and the sigmoid of transformers.js's AutoModelForSequenceClassification logit
// on the same fixture files (within 1e-4), and prompt_tokens counts every pair as it is encoded.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { referenceScores } from '../helpers/exports.js';
import { fixtures } from '../helpers/fixtures.js';
import { createKey, startServer, waitReady, type TestServer } from '../helpers/server.js';

const MODEL = 'svc/tiny-rerank';
const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

let server: TestServer;
let key: string;

beforeAll(async () => {
  await fixtures();
  server = await startServer(['--models', MODEL]);
  key = await createKey(server.dataDir);
  await waitReady(server.url);
}, 120_000);

afterAll(async () => {
  expect(await server?.stop()).toBe(0);
});

async function post(path: string, body: unknown): Promise<Record<string, any>> {
  const res = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as Record<string, any>;
  expect(res.status, JSON.stringify(json)).toBe(200);
  return json;
}

const QUERY = 'What is the capital of France?';
const DOCS = [
  'The capital of France is Paris.',
  'A small bird sang in the tree near the house.',
  'Paris',
  'Café au lait, s’il vous plaît 😀 and a much longer second text about rivers, stones and the weather this week.',
  'France is a country in Europe; its largest city is also its capital.',
  'x',
];
const rerankBody = (extra: Record<string, unknown> = {}) => ({ model: MODEL, query: QUERY, documents: DOCS, ...extra });
type Result = { index: number; relevance_score: number; document?: { text: string } };

describe('/v1/rerank on a real server', () => {
  it("ranks the documents best first, each score the pair's /v1/score and transformers.js's sigmoid of its logit", async () => {
    const rerank = await post('/v1/rerank', rerankBody());
    const results = rerank.results as Result[];
    expect(rerank).toMatchObject({ id: expect.stringMatching(/^rerank-/), model: MODEL });
    expect(results.map((r) => r.index).sort()).toEqual(DOCS.map((_, i) => i));
    for (let i = 1; i < results.length; i++) expect(results[i]!.relevance_score).toBeLessThanOrEqual(results[i - 1]!.relevance_score);
    // Random weights, yet each pair its own score: the order is the scores', not the input's.
    expect(new Set(results.map((r) => r.relevance_score.toFixed(4))).size).toBe(DOCS.length);
    for (const r of results) expect(r.document).toEqual({ text: DOCS[r.index] });

    const scored = await post('/v1/score', { model: MODEL, text_1: QUERY, text_2: DOCS });
    expect(scored).toMatchObject({ id: expect.stringMatching(/^score-/), object: 'list', created: expect.any(Number), model: MODEL });
    expect(scored.data.map((d: { index: number; object: string }) => [d.index, d.object])).toEqual(DOCS.map((_, i) => [i, 'score']));
    for (const r of results) expect(Math.abs(r.relevance_score - scored.data[r.index].score)).toBeLessThan(1e-6);

    const ref = await referenceScores('tiny-rerank', DOCS.map((d) => [QUERY, d]), sigmoid);
    for (const r of results) expect(Math.abs(r.relevance_score - ref.scores[r.index]!)).toBeLessThan(1e-4);
    // Every token of every pair, special tokens included, as transformers.js's tokenizer encodes the pair.
    const tokens = ref.tokens.reduce((a, b) => a + b, 0);
    expect(rerank.usage).toEqual({ prompt_tokens: tokens, total_tokens: tokens });
    expect(scored.usage).toEqual(rerank.usage);
  }, 60_000);

  it('counts prompt_tokens as the sum over the same documents reranked one at a time', async () => {
    const all = await post('/v1/rerank', rerankBody());
    let sum = 0;
    for (const [i, doc] of DOCS.entries()) {
      const one = await post('/v1/rerank', { model: MODEL, query: QUERY, documents: [doc] });
      expect(one.results).toHaveLength(1);
      expect(Math.abs(one.results[0].relevance_score - all.results.find((r: Result) => r.index === i).relevance_score)).toBeLessThan(1e-5);
      sum += one.usage.prompt_tokens;
    }
    expect(all.usage.prompt_tokens).toBe(sum);
  });

  it('keeps the first top_n results, and still counts every pair', async () => {
    const all = await post('/v1/rerank', rerankBody());
    const top = await post('/v1/rerank', rerankBody({ top_n: 2 }));
    expect(top.results).toEqual(all.results.slice(0, 2));
    expect(top.usage).toEqual(all.usage);
    // A top_n past the documents keeps them all.
    expect((await post('/v1/rerank', rerankBody({ top_n: 100 }))).results).toEqual(all.results);
  });

  it('leaves document out with return_documents false, and takes documents as {text} objects', async () => {
    const all = await post('/v1/rerank', rerankBody());
    const bare = await post('/v1/rerank', rerankBody({ return_documents: false }));
    expect(bare.results).toEqual(all.results.map(({ index, relevance_score }: Result) => ({ index, relevance_score })));
    for (const r of bare.results) expect(Object.keys(r).sort()).toEqual(['index', 'relevance_score']);
    const objects = await post('/v1/rerank', rerankBody({ documents: DOCS.map((text) => ({ text })) }));
    expect(objects.results).toEqual(all.results);
  });

  it("takes Jina's and Cohere's request bodies as they are", async () => {
    const all = await post('/v1/rerank', rerankBody());
    const jina = await post('/v1/rerank', rerankBody({ top_n: 3, return_documents: true, user: 'me' }));
    expect(jina.results).toEqual(all.results.slice(0, 3));
    const cohere = await post('/v1/rerank', rerankBody({ top_n: 3, rank_fields: ['text'], max_chunks_per_doc: 10, max_tokens_per_doc: 4096 }));
    expect(cohere.results).toEqual(all.results.slice(0, 3));
  });

  it("cuts a pair longer than the model's context to it rather than refusing it", async () => {
    const long = 'The river ran past the stone garden in winter. '.repeat(200);
    const cut = await post('/v1/rerank', { model: MODEL, query: long, documents: [long, 'x'] });
    const [longPair, shortPair] = await Promise.all(
      [long, 'x'].map(async (d) => (await post('/v1/score', { model: MODEL, text_1: long, text_2: d })).usage.prompt_tokens as number),
    );
    expect(longPair).toBe(512); // tiny-rerank's context
    expect(cut.usage.prompt_tokens).toBe(longPair + shortPair);
  });

  it('answers /rerank as /v1/rerank', async () => {
    const v1 = await post('/v1/rerank', rerankBody({ top_n: 4 }));
    const bare = await post('/rerank', rerankBody({ top_n: 4 }));
    expect({ ...bare, id: undefined }).toEqual({ ...v1, id: undefined });
  });
});

describe("/v2/rerank in Cohere's shape", () => {
  it('answers {id, results: [{index, relevance_score}], meta: {billed_units: {search_units}}}, best first', async () => {
    const v1 = await post('/v1/rerank', rerankBody());
    const v2 = await post('/v2/rerank', rerankBody({ top_n: 3 }));
    expect(Object.keys(v2).sort()).toEqual(['id', 'meta', 'results']);
    expect(v2.id).toEqual(expect.any(String));
    expect(v2.results).toEqual(v1.results.slice(0, 3).map(({ index, relevance_score }: Result) => ({ index, relevance_score })));
    expect(v2.meta).toEqual({ billed_units: { search_units: 1 } });
  });

  it('bills a search unit for each 100 documents', async () => {
    const documents = Array.from({ length: 101 }, (_, i) => `Document ${i} about the sea.`);
    const v2 = await post('/v2/rerank', { model: MODEL, query: QUERY, documents, top_n: 1 });
    expect(v2.results).toHaveLength(1);
    expect(v2.meta).toEqual({ billed_units: { search_units: 2 } });
  });
});

describe('/v1/score pairs as vLLM pairs them', () => {
  it('scores 1 to 1 and N to N in order, each as the pair scored alone', async () => {
    const ones = [QUERY, 'Where is Paris?', 'x'];
    const twos = [DOCS[0]!, DOCS[4]!, DOCS[1]!];
    const many = await post('/v1/score', { model: MODEL, text_1: ones, text_2: twos });
    expect(many.data.map((d: { index: number }) => d.index)).toEqual([0, 1, 2]);
    let sum = 0;
    for (let i = 0; i < ones.length; i++) {
      const one = await post('/v1/score', { model: MODEL, text_1: ones[i], text_2: twos[i] });
      expect(one.data).toHaveLength(1);
      expect(Math.abs(one.data[0].score - many.data[i].score)).toBeLessThan(1e-5);
      sum += one.usage.prompt_tokens;
    }
    expect(many.usage.prompt_tokens).toBe(sum);
    const ref = await referenceScores('tiny-rerank', ones.map((a, i) => [a, twos[i]!]), sigmoid);
    many.data.forEach((d: { score: number }, i: number) => expect(Math.abs(d.score - ref.scores[i]!)).toBeLessThan(1e-4));
    expect(many.usage.prompt_tokens).toBe(ref.tokens.reduce((a, b) => a + b, 0));
  });
});
