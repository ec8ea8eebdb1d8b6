// Which rows of a step read their whole row of logits: only those whose sampling needs it
// (a grammar mask, penalties once tokens exist, more top logprobs than the candidates), and
// only for that step, while truncated rows in the same batch read candidates and greedy
// rows without logprobs their best token alone.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { StepLogits } from '../../../src/engine/models/logits-head.js';
import type { EngineApi } from '../../../src/engine/protocol.js';
import { engineOn, greedy, request } from '../../helpers/engine-on.js';

let engine: EngineApi;
beforeAll(async () => {
  engine = await engineOn('cpu', 0);
}, 60_000);
afterAll(() => engine.dispose());

/** Rows read as their best token alone, as candidates and as whole rows while `fn` runs. */
async function rowsRead(fn: () => Promise<unknown>) {
  const spies = { best: vi.spyOn(StepLogits.prototype, 'best'), candidates: vi.spyOn(StepLogits.prototype, 'candidates'), whole: vi.spyOn(StepLogits.prototype, 'whole') };
  try {
    await fn();
    const count = (spy: (typeof spies)[keyof typeof spies]) => spy.mock.calls.reduce((n, [items]) => n + items.length, 0);
    return { best: count(spies.best), candidates: count(spies.candidates), whole: count(spies.whole) };
  } finally {
    for (const spy of Object.values(spies)) spy.mockRestore();
  }
}

const run = (sampling: Parameters<typeof greedy>[1], tokens = 12) => engine.generate(request('Tell me about the sea', greedy(tokens, { ignore_eos: true, ...sampling })), () => undefined);

describe('rows that read their whole row of logits', () => {
  it('are none for greedy, sampled and truncated requests with logprobs within the candidates', async () => {
    const read = await rowsRead(() =>
      Promise.all([run({}), run({ temperature: 0.8, top_p: 0.9, seed: 3 }), run({ temperature: 1, top_k: 40, logprobs: 5, seed: 4 })]),
    );
    expect(read).toEqual({ best: 12, candidates: 24, whole: 0 });
  });

  it('is the penalised row at each step after its first token, beside greedy rows that read their best token', async () => {
    const read = await rowsRead(() => Promise.all([run({ frequency_penalty: 0.5 }), run({})]));
    // The penalised row: its first token as the best (no counts yet), then 11 whole rows.
    expect(read).toEqual({ best: 13, candidates: 0, whole: 11 });
  });

  it('is every row of a request with a grammar, and of one asking more top logprobs than the candidates hold', async () => {
    const grammar = { type: 'json_object' as const, param: 'response_format' };
    const json = await rowsRead(() => run({ grammar, ignore_eos: false }, 8));
    expect(json.candidates + json.best).toBe(0);
    expect(json.whole).toBeGreaterThan(0);
    const many = await rowsRead(() => run({ logprobs: 100 }, 6));
    expect(many).toEqual({ best: 0, candidates: 0, whole: 6 });
  });

  it('gives a seeded request the same tokens whether its rows come as candidates or whole', async () => {
    const sampling = { temperature: 1.2, top_p: 0.95, seed: 11 };
    const fromCandidates = await run(sampling, 16);
    // logprobs past the candidates make every row whole, and change nothing else.
    const fromWholeRows = await run({ ...sampling, logprobs: 100 }, 16);
    expect(fromWholeRows.token_ids).toEqual(fromCandidates.token_ids);
  });
});
