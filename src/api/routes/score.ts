// POST /v1/score: vLLM's pairwise scores. `text_1` and `text_2` pair as vLLM pairs them: one
// text against each of N (1:1, 1:N), or N against N in order.
import { type Ctx, type RouteDeps, readJson, resolveModel } from '../context.js';
import { invalidRequest, jsonResponse } from '../errors.js';
import { nowSeconds, randomId } from '../ids.js';
import { checkPairs } from '../limits.js';
import { scoreCharged } from '../pairs.js';
import { parseBody } from '../schemas/common.js';
import { keepAliveOf } from '../keep-alive.js';
import { scoreRequestSchema, type ScoreRequestBody } from '../schemas/rerank.js';

export function scorePairs(body: Pick<ScoreRequestBody, 'text_1' | 'text_2'>): [string, string][] {
  const ones = typeof body.text_1 === 'string' ? [body.text_1] : body.text_1;
  const twos = typeof body.text_2 === 'string' ? [body.text_2] : body.text_2;
  if (ones.length === 1) return twos.map((t) => [ones[0]!, t]);
  if (ones.length !== twos.length) {
    throw invalidRequest(`'text_1' has ${ones.length} texts and 'text_2' ${twos.length}: pairs are 1 to 1, 1 to N or N to N.`, 'text_2');
  }
  return ones.map((t, i) => [t, twos[i]!]);
}

export function score(deps: RouteDeps) {
  return async (c: Ctx): Promise<Response> => {
    const raw = await readJson(c, deps);
    const body = parseBody(scoreRequestSchema, raw);
    const keepAlive = keepAliveOf(raw);
    const model = await resolveModel(deps.runtime, body.model, 'rerank');
    const pairs = scorePairs(body);
    checkPairs(pairs.length, deps.limits, 'text_2');
    const { scores, prompt_tokens } = await scoreCharged(deps, c, model, pairs, keepAlive);
    return jsonResponse({
      id: randomId('score-'),
      object: 'list',
      created: nowSeconds(),
      model: model.id,
      data: scores.map((s, index) => ({ index, object: 'score', score: s })),
      usage: { prompt_tokens, total_tokens: prompt_tokens },
    });
  };
}
