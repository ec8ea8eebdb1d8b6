// The step loop's phase sums (engine stats, /metrics, the bench's breakdown) on the real
// fixture model: they add up to no more than the time that passed, and the graph is in them.
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { nodeBackend } from '../../src/backends/node.js';
import { CausalLM } from '../../src/engine/models/causal-lm.js';
import type { SamplingParams } from '../../src/engine/protocol.js';
import { Scheduler } from '../../src/engine/scheduler.js';
import { Sequence } from '../../src/engine/sequence.js';
import { STEP_PHASES } from '../../src/engine/step-timings.js';
import { TextCodec } from '../../src/engine/text/codec.js';
import { fixtures } from '../helpers/fixtures.js';

let codec: TextCodec;
let lm: CausalLM;
const entry = { id: 'svc/tiny-chat', task: 'chat' as const, class: 'tiny', context_length: 2048, source: '', price: { input_per_1m: 0, output_per_1m: 0 } };
const sampling: SamplingParams = {
  temperature: 0, top_p: 1, top_k: -1, min_p: 0, presence_penalty: 0, frequency_penalty: 0,
  stop: [], stop_token_ids: [], ignore_eos: true, logprobs: -1, max_tokens: 12,
};

beforeAll(async () => {
  const dir = join(await fixtures(), 'tiny-chat');
  codec = await TextCodec.load(dir, { localOnly: true });
  lm = await CausalLM.load(nodeBackend('cpu'), dir, { ...entry, source: dir });
});

describe('step timings', () => {
  it('count every decode step and its rows, and their phases add up to less than the time that passed', async () => {
    const s = new Scheduler(lm);
    const t0 = performance.now();
    const seqs = ['one', 'two', 'three'].map((w, i) => {
      const { ids, text } = codec.encodeChat([{ role: 'user', content: w }]);
      return new Sequence({ id: `t${i}`, model: entry.id, prompt: { text: w }, sampling }, ids, text, codec, { eosIds: lm.eosIds, contextLength: 2048 }, () => undefined);
    });
    for (const q of seqs) s.submit(q);
    const results = await Promise.all(seqs.map((q) => q.result));
    const wall = performance.now() - t0;

    const { steps, rows, ms } = s.stats().timings;
    // Each sequence's first token comes from its prefill, the other 11 from decode steps.
    expect(rows).toBe(results.reduce((n, r) => n + r.completion_tokens - 1, 0));
    expect(steps).toBeGreaterThanOrEqual(11);
    expect(steps).toBeLessThan(rows);
    expect(Object.keys(ms).sort()).toEqual([...STEP_PHASES].sort());
    expect(ms.graph).toBeGreaterThan(0);
    expect(ms.prefill).toBeGreaterThan(0);
    for (const phase of STEP_PHASES) expect(ms[phase]).toBeGreaterThanOrEqual(0);
    expect(Object.values(ms).reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(wall);
  });
});
