// Speculative decoding changes how many graph runs a reply takes, never the reply: on every
// text fixture of the tests (plain and fused graphs, every dtype the exports hold), greedy output with
// prompt lookup on is token for token what it is with it off, alone and batched, and the
// verify steps really ran (drafts were made, and some were accepted).
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { nodeBackend } from '../../../src/backends/node.js';
import { CausalLM } from '../../../src/engine/models/causal-lm.js';
import type { CatalogEntry, SamplingParams } from '../../../src/engine/protocol.js';
import { Scheduler } from '../../../src/engine/scheduler.js';
import { Sequence } from '../../../src/engine/sequence.js';
import { TextCodec } from '../../../src/engine/text/codec.js';
import { EXPORT_VARIANTS, exportEntry, exportFixtures } from '../../helpers/exports.js';
import { fixtures } from '../../helpers/fixtures.js';

const greedy: SamplingParams = {
  temperature: 0, top_p: 1, top_k: -1, min_p: 0, presence_penalty: 0, frequency_penalty: 0,
  stop: [], stop_token_ids: [], ignore_eos: true, logprobs: -1, max_tokens: 40,
};

// Repetitive prompts give prompt lookup something to match; random weights loop often enough for drafts to be accepted.
const PROMPTS = [
  'one two three four, one two three four, one two three four, one two',
  'The river runs to the sea. The river runs to the sea. The river',
  'abc abc abc abc abc',
];

let exportsDir: string;
let fixturesDir: string;
beforeAll(async () => {
  [exportsDir, fixturesDir] = await Promise.all([exportFixtures(), fixtures()]);
}, 600_000);

const plainEntry = (name: string, dtype = 'fp32'): CatalogEntry => ({
  id: `svc/${name}`, task: 'chat', class: 'tiny', context_length: 4096, source: join(fixturesDir, name), dtype: { cpu: dtype }, price: { input_per_1m: 0, output_per_1m: 0 },
});

let n = 0;
function generate(s: Scheduler, codec: TextCodec, lm: CausalLM, text: string, sampling: SamplingParams = greedy): Promise<number[]> {
  const ids = codec.encodeText(text);
  const seq = new Sequence({ id: `s${n++}`, model: 'm', prompt: { text }, sampling }, ids, text, codec, { eosIds: lm.eosIds, contextLength: 4096 }, () => undefined);
  s.submit(seq);
  return seq.result.then((r) => r.token_ids);
}

async function compare(entry: CatalogEntry) {
  const backend = nodeBackend('cpu');
  const codec = await TextCodec.load(entry.source, { localOnly: true });
  const lm = await CausalLM.load(backend, entry.source, entry);
  try {
    const off = new Scheduler(lm, { speculative: 'off' });
    const on = new Scheduler(lm, { speculative: 'ngram' });
    for (const p of PROMPTS) expect(await generate(on, codec, lm, p), p).toEqual(await generate(off, codec, lm, p));
    // q8 exports quantize activations per run (DynamicQuantizeLinear): a position's logits depend on the others', so they never draft.
    if (!lm.io.positionsIndependent) {
      expect(on.stats().specDrafted).toBe(0);
      return on.stats();
    }
    // Batched: speculation waits until one sequence is left, then drafts for it.
    const lengths = [12, 40, 25];
    const sampling = (i: number) => ({ ...greedy, max_tokens: lengths[i] });
    const together = await Promise.all(PROMPTS.map((p, i) => generate(on, codec, lm, p, sampling(i))));
    for (const [i, p] of PROMPTS.entries()) expect(together[i], `${p}, batched`).toEqual(await generate(off, codec, lm, p, sampling(i)));
    const stats = on.stats();
    expect(stats.specDrafted).toBeGreaterThan(0);
    expect(off.stats().specDrafted).toBe(0);
    return stats;
  } finally {
    await lm.dispose();
  }
}

describe('greedy output with prompt lookup on equals it off', () => {
  const accepted: number[] = [];

  it('tiny-chat fp32', async () => {
    accepted.push((await compare(plainEntry('tiny-chat'))).specAccepted);
  }, 120_000);

  it.each(EXPORT_VARIANTS)('%s %s', async (name, dtype) => {
    accepted.push((await compare(exportEntry(exportsDir, name, dtype))).specAccepted);
  }, 120_000);

  it('accepted drafts on most fixtures (the verify path really produced tokens)', () => {
    expect(accepted.filter((a) => a > 0).length).toBeGreaterThan(accepted.length / 2);
  });
});
