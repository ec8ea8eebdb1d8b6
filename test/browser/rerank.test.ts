// Reranking in a real headless Chromium tab, on WASM and on WebGPU (SwiftShader here): the
// page's own fetch posts to /v1/rerank, /v2/rerank and /v1/score, answered in the tab by the
// cross-encoder fixture on onnxruntime-web, with the scores onnxruntime-node gives for the
// same pairs. One page per device and one request per endpoint keep it short.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, freshBrowser, openDemo, pageModuleCaller, startDemo, type DemoServer, type HearthInfo } from './harness.js';
import { nodeReference } from './node-reference.js';

const call = pageModuleCaller<typeof import('./page-rerank.js')>('page-rerank.ts');
const suite = CHROMIUM ? describe : describe.skip;

// The demo serves the fixtures its `?models=` names: the reranker, and a chat model to refuse.
const MODELS = ['svc/tiny-chat', 'svc/tiny-rerank'];
const MODEL = 'svc/tiny-rerank';
const QUERY = 'where did the cat sit';
const DOCUMENTS = ['the cat sat on the mat', 'dogs run in the park', 'a cat and a hat', 'prices fell on monday'];
const SCORE = { text_1: ['the cat', 'a dog'], text_2: ['the cat sat on the mat', 'dogs run in the park'] };

interface Result {
  index: number;
  relevance_score: number;
  document?: { text: string };
}

let server: DemoServer;
let node: { rerank: { results: Result[]; usage: unknown }; score: { data: { index: number; score: number }[]; usage: unknown } };

beforeAll(async () => {
  if (!CHROMIUM) return;
  const reference = nodeReference(MODELS);
  [server] = await Promise.all([startDemo(), reference]);
  const ref = await reference;
  node = {
    rerank: await ref.post('/v1/rerank', { model: MODEL, query: QUERY, documents: DOCUMENTS }),
    score: await ref.post('/v1/score', { model: MODEL, ...SCORE }),
  };
  await ref.close();
}, 180_000);

afterAll(async () => {
  await server?.close();
});

/** Each document's score, in the documents' order. */
const byIndex = (results: Result[]) => DOCUMENTS.map((_, i) => results.find((x) => x.index === i)!.relevance_score);

for (const device of ['wasm', 'webgpu'] as const) {
  suite(`reranking in the page on ?device=${device}`, () => {
    const browser = freshBrowser();
    let info: HearthInfo;
    let errors: string[];
    let r: Awaited<ReturnType<typeof import('./page-rerank.js').rerankFlow>>;

    beforeAll(async () => {
      const tab = await openDemo(browser.context, `${server.url}?device=${device}&models=${MODELS.join(',')}`);
      ({ info, errors } = tab);
      r = await call(tab.page, 'rerankFlow', info, MODEL, QUERY, DOCUMENTS, SCORE);
    }, 240_000);

    it('serves the reranker the page asked for, on the device asked for', () => {
      expect(info.device).toBe(device);
      expect(info.models).toEqual(MODELS);
    });

    it("ranks every document best first, with onnxruntime-node's scores within 1e-4, the texts and usage", () => {
      expect(r.rerank.status).toBe(200);
      const results: Result[] = r.rerank.body.results;
      expect(r.rerank.body.model).toBe(MODEL);
      expect(results.map((x) => x.index).sort()).toEqual([0, 1, 2, 3]);
      const scores = results.map((x) => x.relevance_score);
      expect([...scores].sort((a, b) => b - a)).toEqual(scores);
      const theirs = byIndex(node.rerank.results);
      byIndex(results).forEach((s, i) => expect(Math.abs(s - theirs[i]!), `document ${i}`).toBeLessThan(1e-4));
      for (const x of results) expect(x.document).toEqual({ text: DOCUMENTS[x.index] });
      expect(r.rerank.body.usage).toEqual(node.rerank.usage);
      expect(r.rerank.body.usage.prompt_tokens).toBeGreaterThan(0);
    });

    it("answers Cohere's v2 path beside the base URL in Cohere's shape, keeping the top two", () => {
      expect(r.cohere.status).toBe(200);
      expect(Object.keys(r.cohere.body).sort()).toEqual(['id', 'meta', 'results']);
      expect(r.cohere.body.results).toEqual(r.rerank.body.results.slice(0, 2).map(({ index, relevance_score }: Result) => ({ index, relevance_score })));
      expect(r.cohere.body.meta).toEqual({ billed_units: { search_units: 1 } });
    });

    it("scores N-to-N pairs on /v1/score with onnxruntime-node's scores within 1e-4", () => {
      expect(r.score.status).toBe(200);
      expect(r.score.body).toMatchObject({ object: 'list', model: MODEL, usage: node.score.usage });
      expect(r.score.body.data.map((d: { index: number; object: string }) => [d.index, d.object])).toEqual([[0, 'score'], [1, 'score']]);
      r.score.body.data.forEach((d: { score: number }, i: number) => expect(Math.abs(d.score - node.score.data[i]!.score), `pair ${i}`).toBeLessThan(1e-4));
    });

    it("refuses a chat model with a 400 in OpenAI's envelope naming model", () => {
      expect(r.refused.status).toBe(400);
      expect(r.refused.body.error).toMatchObject({ type: 'invalid_request_error', param: 'model' });
      expect(r.refused.body.error.message).toContain('is a chat model');
    });

    it('logged no page errors', () => {
      expect(errors).toEqual([]);
    });
  });
}
