// The scheduler on a fused export (onnxruntime-genai's builder form, GroupQueryAttention):
// its batches are padded on the right, each row's cache a prefix, and every way a request
// can share a graph run (concurrent prompts of different lengths, a prefix-cache hit,
// cached prefixes of different lengths, a chunked prompt beside running streams) gives it
// the tokens it gets alone, which are transformers.js's on the same file. In fp32, q4 (int4,
// float32 activations) and q4f16 (int4, float16 activations, KV and logits): onnxruntime 1.30's
// CPU provider has float16 kernels for GroupQueryAttention, MatMulNBits, GatherBlockQuantized and
// the norms; the MLP's Sigmoid and Mul it runs in float32 between Casts it inserts itself.
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { nodeBackend } from '../../src/backends/node.js';
import { PrefixCache } from '../../src/engine/kv/prefix-cache.js';
import { CausalLM } from '../../src/engine/models/causal-lm.js';
import type { ChatMessage, SamplingParams } from '../../src/engine/protocol.js';
import { Scheduler } from '../../src/engine/scheduler.js';
import { Sequence } from '../../src/engine/sequence.js';
import { TextCodec } from '../../src/engine/text/codec.js';
import { exportFixtures, referenceGreedy, referencePromptIds } from '../helpers/exports.js';

const NAME = 'llama3_2-fused-export';
const greedy: SamplingParams = {
  temperature: 0, top_p: 1, top_k: -1, min_p: 0, presence_penalty: 0, frequency_penalty: 0,
  stop: [], stop_token_ids: [], ignore_eos: true, logprobs: -1, max_tokens: 10,
};
const user = (content: string): ChatMessage[] => [{ role: 'user', content }];
// Prompts of different lengths, so that rows are padded differently.
const PROMPTS = ['Hi', 'What is fire?', 'Tell me about the rivers and mountains of Europe, please.', 'Why is ice cold and slippery in winter?'].map(user);

let codec: TextCodec;
const models: Record<string, CausalLM> = {};

beforeAll(async () => {
  const dir = join(await exportFixtures(), NAME);
  codec = await TextCodec.load(dir, { localOnly: true });
  for (const dtype of ['fp32', 'q4', 'q4f16']) {
    const entry = { id: `svc/${NAME}-${dtype}`, task: 'chat' as const, class: 'tiny', context_length: 4096, source: dir, dtype: { cpu: dtype }, price: { input_per_1m: 0, output_per_1m: 0 } };
    models[dtype] = await CausalLM.load(nodeBackend('cpu'), dir, entry);
  }
}, 60_000);

/** A scheduler whose graph runs are recorded: rows per decode step and per prefill run. */
function scheduler(lm: CausalLM, opts: { prefixCache?: PrefixCache; prefillChunk?: number } = {}) {
  const steps: number[] = [];
  const prefillRuns: number[][] = [];
  const spy = Object.create(lm) as CausalLM;
  spy.decode = (tokens, batch) => (steps.push(tokens.length), lm.decode(tokens, batch));
  spy.prefillMany = (items) => (prefillRuns.push(items.map((i) => i.tokens.length)), lm.prefillMany(items));
  return { s: new Scheduler(spy, opts), steps, prefillRuns };
}

let n = 0;
function run(s: Scheduler, lm: CausalLM, messages: ChatMessage[], sampling: Partial<SamplingParams> = {}) {
  const { ids, text } = codec.encodeChat(messages);
  const seq = new Sequence(
    { id: `f${n++}`, model: NAME, prompt: { messages }, sampling: { ...greedy, ...sampling } },
    ids, text, codec, { eosIds: lm.eosIds, contextLength: 4096 }, () => undefined,
  );
  s.submit(seq);
  return seq.result;
}

async function alone(lm: CausalLM, prompts: ChatMessage[][]): Promise<number[][]> {
  const out = [];
  for (const p of prompts) out.push((await run(scheduler(lm).s, lm, p)).token_ids);
  return out;
}

describe.each(['fp32', 'q4', 'q4f16'])('a fused export (%s)', (dtype) => {
  // fp32 and q4 are also in the export parity tests (test/engine/models/parity.test.ts).
  it("gives transformers.js's greedy tokens on the same file, alone, for prompts of different lengths", async () => {
    const lm = models[dtype]!;
    const expected = await referenceGreedy(NAME, dtype, PROMPTS, greedy.max_tokens!);
    const got = await alone(lm, PROMPTS);
    for (const p of PROMPTS) expect(codec.encodeChat(p).ids).toEqual(await referencePromptIds(NAME, p));
    expect(got).toEqual(expected);
  }, 60_000);

  it('pads its batches on the right, as GroupQueryAttention reads each row as a prefix', () => {
    expect(models[dtype]!.io).toMatchObject({ padding: 'right', positionIds: false, batchesPrefixedChunks: false });
  });

  it('gives each of 4 concurrent requests of different lengths the tokens it gets alone', async () => {
    const lm = models[dtype]!;
    const expected = await alone(lm, PROMPTS);
    const { s, steps, prefillRuns } = scheduler(lm);
    const together = await Promise.all(PROMPTS.map((p) => run(s, lm, p)));
    expect(together.map((r) => r.token_ids)).toEqual(expected);
    expect(new Set(expected.map((t) => t.join())).size).toBeGreaterThan(1); // the prompts lead somewhere different
    expect(Math.max(...steps)).toBe(4); // decoded together
    expect(Math.max(...prefillRuns.map((r) => r.length))).toBeGreaterThan(1); // and prefilled together
  }, 60_000);

  it('gives a prompt whose prefix the cache holds the tokens it gets without the cache', async () => {
    const lm = models[dtype]!;
    const system = { role: 'system' as const, content: 'You are a helpful assistant who answers in short words.' };
    const warm = [system, ...user('What is fire?')];
    const hit = [system, ...user('Why is the sea salty?')];
    const [expected] = await alone(lm, [hit]);
    const { s } = scheduler(lm, { prefixCache: new PrefixCache(lm.kvShape, 64 << 20) });
    await run(s, lm, warm);
    const r = await run(s, lm, hit);
    expect(r.cached_tokens).toBeGreaterThan(10);
    expect(r.token_ids).toEqual(expected);
  }, 60_000);

  it('runs prompts with cached prefixes of different lengths each alone in its prefill, each with its tokens alone', async () => {
    const lm = models[dtype]!;
    const long = { role: 'system' as const, content: 'You are a helpful assistant who answers in short words. '.repeat(3) };
    const short = { role: 'system' as const, content: 'Be brief and kind.' };
    const prompts = [[long, ...user('What is fire?')], [short, ...user('What is rain?')], [long, ...user('Why is ice cold?')], user('Hello there')];
    const expected = await alone(lm, prompts);
    const { s, prefillRuns, steps } = scheduler(lm, { prefixCache: new PrefixCache(lm.kvShape, 64 << 20) });
    await run(s, lm, [long, ...user('warm up')]);
    await run(s, lm, [short, ...user('warm up')]);
    const runs = prefillRuns.length;
    const together = await Promise.all(prompts.map((p) => run(s, lm, p)));
    expect(together.map((r) => r.token_ids)).toEqual(expected);
    expect(together[0]!.cached_tokens).toBeGreaterThan(together[1]!.cached_tokens);
    // onnxruntime refuses several tokens after a past at batch > 1: those prefills ran one row each.
    expect(prefillRuns.slice(runs).every((rows) => rows.length === 1)).toBe(true);
    expect(Math.max(...steps)).toBe(4);
  }, 60_000);

  it("reuses a reply decoded in a batch of rows of different lengths as the next turn's prefix", async () => {
    const lm = models[dtype]!;
    const cache = new PrefixCache(lm.kvShape, 64 << 20);
    const { s } = scheduler(lm, { prefixCache: cache });
    // They finish in the same step, so each row is stored from the batch, padding and all.
    const replies = await Promise.all(PROMPTS.map((p) => run(s, lm, p)));
    const turn2 = [...PROMPTS[0]!, { role: 'assistant' as const, content: replies[0]!.text }, ...user('And then?')];
    const [expected] = await alone(lm, [turn2]);
    const r = await run(s, lm, turn2);
    expect(r.cached_tokens).toBeGreaterThanOrEqual(codec.encodeChat(PROMPTS[0]!).ids.length);
    expect(r.token_ids).toEqual(expected);
  }, 60_000);

  it('prefills a long prompt in chunks beside running streams, with the tokens it gets alone', async () => {
    const lm = models[dtype]!;
    const long = user('a long prompt about rivers and stones and quiet gardens in winter '.repeat(4));
    const [expected] = await alone(lm, [long]);
    const { s, prefillRuns } = scheduler(lm, { prefillChunk: 16 });
    const running = run(s, lm, user('keep streaming'), { max_tokens: 30 });
    const chunked = run(s, lm, long);
    expect((await chunked).token_ids).toEqual(expected);
    await running;
    expect(Math.max(...prefillRuns.flat())).toBeLessThanOrEqual(16);
  }, 60_000);

  it('would give wrong tokens with its rows padded on the left (so the layout is what makes them right)', async () => {
    const lm = models[dtype]!;
    const expected = await alone(lm, PROMPTS);
    const leftPadded = Object.create(lm) as CausalLM;
    Object.defineProperty(leftPadded, 'io', { value: { ...lm.io, padding: 'left' } });
    const s = new Scheduler(leftPadded);
    const together = await Promise.all(PROMPTS.map((p) => run(s, lm, p)));
    expect(together.map((r) => r.token_ids)).not.toEqual(expected);
  }, 60_000);
});
