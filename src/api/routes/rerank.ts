// POST /v1/rerank (and /rerank): the documents ordered by their relevance to the query,
// best first, in the shape vLLM, Jina and llama.cpp's server answer; `top_n` cuts the
// results, not the work (every pair is scored and charged). POST /v2/rerank answers
// Cohere's v2 client in Cohere's shape.
import { type Ctx, type RouteDeps, readJson, resolveModel } from '../context.js';
import { randomId } from '../ids.js';
import { jsonResponse } from '../errors.js';
import { checkPairs } from '../limits.js';
import { scoreCharged } from '../pairs.js';
import { parseBody } from '../schemas/common.js';
import { keepAliveOf } from '../keep-alive.js';
import { documentText, rerankRequestSchema } from '../schemas/rerank.js';

export type RerankShape = 'jina' | 'cohere-v2';

/** Cohere bills a search unit a query with up to 100 documents. */
const searchUnits = (documents: number) => Math.ceil(documents / 100);

export function rerank(deps: RouteDeps, shape: RerankShape = 'jina') {
  return async (c: Ctx): Promise<Response> => {
    const raw = await readJson(c, deps);
    const body = parseBody(rerankRequestSchema, raw);
    const keepAlive = keepAliveOf(raw);
    const model = await resolveModel(deps.runtime, body.model, 'rerank');
    checkPairs(body.documents.length, deps.limits, 'documents');
    const texts = body.documents.map(documentText);
    const { scores, prompt_tokens } = await scoreCharged(deps, c, model, texts.map((d) => [body.query, d]), keepAlive);
    // Ties keep the documents' order, so a reply is the same for the same request.
    const ranked = scores.map((relevance_score, index) => ({ index, relevance_score })).sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index);
    const kept = ranked.slice(0, body.top_n ?? ranked.length);
    if (shape === 'cohere-v2') {
      return jsonResponse({ id: randomId('rerank-'), results: kept, meta: { billed_units: { search_units: searchUnits(texts.length) } } });
    }
    const withDocuments = body.return_documents ?? true;
    return jsonResponse({
      id: randomId('rerank-'),
      model: model.id,
      results: kept.map((r) => (withDocuments ? { ...r, document: { text: texts[r.index]! } } : r)),
      usage: { prompt_tokens, total_tokens: prompt_tokens },
    });
  };
}
