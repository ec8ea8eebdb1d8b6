import { describe, expect, test } from 'vitest';
import { setup } from './harness.js';

const DOCS = ['the cat sat', 'a cat and a hat sat on a mat', 'dogs run', 'cat hat mat sat'];
const QUERY = 'cat hat mat';

describe('POST /v1/rerank with the stub engine', () => {
  test('ranks the documents best first with their indexes, scores, texts and usage', async () => {
    const { post, engine, access } = setup();
    const res = await post('/v1/rerank', { model: 'svc/tiny-rerank', query: QUERY, documents: DOCS });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(engine.scoreCalls[0]!.pairs).toEqual(DOCS.map((d) => [QUERY, d]));
    expect(body.id).toMatch(/^rerank-/);
    expect(body.model).toBe('svc/tiny-rerank');
    expect(body.results.map((r: { index: number }) => r.index)).toEqual([1, 3, 0, 2]);
    expect(body.results[0]).toEqual({ index: 1, relevance_score: 1, document: { text: DOCS[1] } });
    expect(body.results[2]).toEqual({ index: 0, relevance_score: 1 / 3, document: { text: DOCS[0] } });
    const tokens = DOCS.reduce((n, d) => n + 3 + d.split(' ').length, 0);
    expect(body.usage).toEqual({ prompt_tokens: tokens, total_tokens: tokens });
    expect(access.records[0]!.usage).toMatchObject({ model: 'svc/tiny-rerank', prompt_tokens: tokens, completion_tokens: 0 });
  });

  test('keeps top_n results but scores and charges every document', async () => {
    const { post, engine } = setup();
    const body = await (await post('/v1/rerank', { model: 'svc/tiny-rerank', query: QUERY, documents: DOCS, top_n: 2 })).json();
    expect(body.results.map((r: { index: number }) => r.index)).toEqual([1, 3]);
    expect(engine.scoreCalls[0]!.pairs).toHaveLength(4);
    expect(body.usage.prompt_tokens).toBe(DOCS.reduce((n, d) => n + 3 + d.split(' ').length, 0));
  });

  test("takes Cohere's and Jina's document objects, and leaves documents out when asked", async () => {
    const { post } = setup();
    const body = await (
      await post('/rerank', { model: 'svc/tiny-rerank', query: QUERY, documents: DOCS.map((text) => ({ text })), return_documents: false, rank_fields: ['text'] })
    ).json();
    expect(body.results).toHaveLength(4);
    expect(body.results[0]).toEqual({ index: 1, relevance_score: 1 });
  });

  test("answers Cohere's v2 client at /v2/rerank in Cohere's shape", async () => {
    const { post } = setup();
    const body = await (await post('/v2/rerank', { model: 'svc/tiny-rerank', query: QUERY, documents: DOCS, top_n: 3 })).json();
    expect(Object.keys(body).sort()).toEqual(['id', 'meta', 'results']);
    expect(body.results).toEqual([
      { index: 1, relevance_score: 1 },
      { index: 3, relevance_score: 1 },
      { index: 0, relevance_score: 1 / 3 },
    ]);
    expect(body.meta).toEqual({ billed_units: { search_units: 1 } });
  });

  test('refuses a chat or embedding model with a 400 naming its task', async () => {
    const { post } = setup();
    for (const [model, task] of [['svc/tiny-chat', 'chat'], ['svc/tiny-embed', 'embedding']]) {
      const res = await post('/v1/rerank', { model, query: QUERY, documents: DOCS });
      expect(res.status).toBe(400);
      const { error } = await res.json();
      expect(error.param).toBe('model');
      expect(error.message).toContain(`is ${task === 'embedding' ? 'an' : 'a'} ${task} model`);
    }
  });

  test('refuses a missing query, no documents, a bad top_n and too many documents with 400s naming the field', async () => {
    const { post } = setup({ maxEmbeddingInputs: 3 });
    const cases: [unknown, string][] = [
      [{ model: 'svc/tiny-rerank', documents: DOCS }, 'query'],
      [{ model: 'svc/tiny-rerank', query: QUERY, documents: [] }, 'documents'],
      [{ model: 'svc/tiny-rerank', query: QUERY, documents: [3] }, 'documents[0]'],
      [{ model: 'svc/tiny-rerank', query: QUERY, documents: DOCS.slice(0, 2), top_n: 0 }, 'top_n'],
      [{ model: 'svc/tiny-rerank', query: QUERY, documents: DOCS }, 'documents'],
    ];
    for (const [body, param] of cases) {
      const res = await post('/v1/rerank', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await res.json()).error.param).toBe(param);
    }
  });

  test('answers an unknown model with a 404', async () => {
    const { post } = setup();
    const res = await post('/v1/rerank', { model: 'svc/nope', query: QUERY, documents: DOCS });
    expect(res.status).toBe(404);
  });
});

describe('POST /v1/score with the stub engine', () => {
  test('pairs one text with each of N, and answers a list of scores with usage', async () => {
    const { post, engine } = setup();
    const body = await (await post('/v1/score', { model: 'svc/tiny-rerank', text_1: QUERY, text_2: DOCS })).json();
    expect(engine.scoreCalls[0]!.pairs).toEqual(DOCS.map((d) => [QUERY, d]));
    expect(body).toMatchObject({ object: 'list', model: 'svc/tiny-rerank' });
    expect(body.id).toMatch(/^score-/);
    expect(typeof body.created).toBe('number');
    expect(body.data).toEqual([
      { index: 0, object: 'score', score: 1 / 3 },
      { index: 1, object: 'score', score: 1 },
      { index: 2, object: 'score', score: 0 },
      { index: 3, object: 'score', score: 1 },
    ]);
    expect(body.usage.prompt_tokens).toBe(body.usage.total_tokens);
  });

  test('pairs N texts with N in order, and one with one', async () => {
    const { post, engine } = setup();
    await post('/v1/score', { model: 'svc/tiny-rerank', text_1: ['a', 'b'], text_2: ['c', 'd'] });
    await post('/v1/score', { model: 'svc/tiny-rerank', text_1: 'a', text_2: 'c' });
    await post('/v1/score', { model: 'svc/tiny-rerank', text_1: ['a'], text_2: ['c', 'd'] });
    expect(engine.scoreCalls.map((c) => c.pairs)).toEqual([
      [['a', 'c'], ['b', 'd']],
      [['a', 'c']],
      [['a', 'c'], ['a', 'd']],
    ]);
  });

  test('refuses texts that do not pair with a 400 naming text_2, and missing texts naming their field', async () => {
    const { post } = setup();
    const res = await post('/v1/score', { model: 'svc/tiny-rerank', text_1: ['a', 'b'], text_2: ['c', 'd', 'e'] });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatchObject({ param: 'text_2', type: 'invalid_request_error' });
    const missing = await post('/v1/score', { model: 'svc/tiny-rerank', text_2: 'c' });
    expect(missing.status).toBe(400);
    expect((await missing.json()).error.param).toBe('text_1');
  });
});
