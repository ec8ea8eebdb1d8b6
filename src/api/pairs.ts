// What rerank and score share: the pairs held against the account's cap, scored by the
// engine, and charged before the reply (a store that cannot take the charge means 503,
// not a free answer).
import { reservePairs, usageRecord } from './charge.js';
import type { Ctx, RouteDeps } from './context.js';
import type { KeepAlive, ModelState, ScoreResult } from '../engine/protocol.js';

export async function scoreCharged(deps: RouteDeps, c: Ctx, model: ModelState, pairs: [string, string][], keepAlive: KeepAlive = {}): Promise<ScoreResult> {
  const hold = await reservePairs(deps.runtime, c.get('principal'), model, pairs);
  const result = await deps.runtime.engine.score({ model: model.id, pairs, ...keepAlive }).catch(async (err: unknown) => {
    await hold.settle(null);
    throw err;
  });
  await hold.settle(usageRecord(deps.runtime, model.id, { prompt_tokens: result.prompt_tokens, completion_tokens: 0 }), { beforeReply: true });
  return result;
}
