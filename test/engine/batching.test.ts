// The scheduler on the real fixture model: batching, cancellation and the prefix
// cache, observed through the model's own forward calls.
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { nodeBackend } from '../../src/backends/node.js';
import { PrefixCache } from '../../src/engine/kv/prefix-cache.js';
import { CausalLM } from '../../src/engine/models/causal-lm.js';
import type { ChatMessage, SamplingParams } from '../../src/engine/protocol.js';
import { Scheduler } from '../../src/engine/scheduler.js';
import { Sequence } from '../../src/engine/sequence.js';
import { TextCodec } from '../../src/engine/text/codec.js';
import { fixtures } from '../helpers/fixtures.js';

let codec: TextCodec;
let lm: CausalLM;
const entry = { id: 'svc/tiny-chat', task: 'chat' as const, class: 'tiny', context_length: 2048, source: '', price: { input_per_1m: 0, output_per_1m: 0 } };
const greedy: SamplingParams = {
  temperature: 0, top_p: 1, top_k: -1, min_p: 0, presence_penalty: 0, frequency_penalty: 0,
  stop: [], stop_token_ids: [], ignore_eos: false, logprobs: -1,
};

beforeAll(async () => {
  const dir = join(await fixtures(), 'tiny-chat');
  codec = await TextCodec.load(dir, { localOnly: true });
  lm = await CausalLM.load(nodeBackend('cpu'), dir, { ...entry, source: dir });
});

/** A scheduler whose graph runs are recorded: rows per decode step, rows per prefill run, chunk lengths. */
function scheduler(prefixCache?: PrefixCache, prefillChunk?: number) {
  const steps: number[] = [];
  const prefillRuns: number[] = [];
  const prefills: number[] = [];
  const order: string[] = [];
  const spy = Object.create(lm) as CausalLM;
  spy.decode = (tokens, batch) => (steps.push(tokens.length), order.push('d'), lm.decode(tokens, batch));
  spy.prefillMany = (items) => (prefillRuns.push(items.length), prefills.push(...items.map((i) => i.tokens.length)), order.push('p'), lm.prefillMany(items));
  return { s: new Scheduler(spy, { prefixCache, prefillChunk }), steps, prefillRuns, prefills, order };
}

let n = 0;
function run(s: Scheduler, messages: ChatMessage[], sampling: Partial<SamplingParams> = {}, onToken: () => void = () => undefined) {
  const { ids, text } = codec.encodeChat(messages);
  const seq = new Sequence(
    { id: `q${n++}`, model: entry.id, prompt: { messages }, sampling: { ...greedy, ...sampling } },
    ids, text, codec, { eosIds: lm.eosIds, contextLength: 2048 }, onToken,
  );
  s.submit(seq);
  return seq;
}
const user = (content: string): ChatMessage[] => [{ role: 'user', content }];
const words = ['fire', 'ice', 'a much longer question about the wind and the weather', 'rock', 'sand?', 'rain', 'snow and mud', 'x'];

describe('continuous batching', () => {
  it('decodes concurrent sequences together yet gives each its text alone', async () => {
    const alone: string[] = [];
    for (const w of words) {
      const { s } = scheduler();
      alone.push((await run(s, user(w)).result).text);
    }
    const { s, steps } = scheduler();
    const together = await Promise.all(words.map((w) => run(s, user(w)).result));
    expect(together.map((r) => r.text)).toEqual(alone);
    expect(Math.max(...steps)).toBeGreaterThanOrEqual(4);
  });

  it('keeps batched sampled output reproducible by seed', async () => {
    const sampled = { temperature: 1.5, seed: 11 };
    const { s: a } = scheduler();
    const solo = (await run(a, user('rain'), sampled).result).text;
    const { s: b } = scheduler();
    const all = await Promise.all(words.map((w) => run(b, user(w), w === 'rain' ? sampled : {}).result));
    expect(all[words.indexOf('rain')].text).toBe(solo);
  });

  it('prefills a long prompt in chunks between decode steps, with the same result', async () => {
    const long = user('a long prompt about rivers and stones and quiet gardens in winter '.repeat(6));
    const { s: whole } = scheduler();
    const expected = (await run(whole, long).result).text;
    const { s, prefills, order } = scheduler(undefined, 16);
    const running = run(s, user('keep streaming'), { ignore_eos: true, max_tokens: 40 });
    while (!order.includes('d')) await new Promise((r) => setImmediate(r));
    const chunked = run(s, long);
    expect((await chunked.result).text).toBe(expected);
    await running.result;
    expect(Math.max(...prefills)).toBeLessThanOrEqual(16);
    // Between two chunks of the long prompt the running stream decoded a token.
    const afterFirstDecode = order.slice(order.indexOf('d')).join('');
    expect(afterFirstDecode).toMatch(/^d(pd)+/);
  });

  it('prefills a burst of short prompts in one graph run, so they decode together from the first step', async () => {
    const { s, steps, prefillRuns, order } = scheduler();
    await Promise.all(['fire', 'ice', 'rock', 'sand?'].map((w) => run(s, user(w), { ignore_eos: true, max_tokens: 6 }).result));
    expect(order.join('')).toMatch(/^pd/);
    expect(prefillRuns[0]).toBe(4);
    expect(steps[0]).toBe(4);
  });

  it('gives a short prompt its first token before a long prompt ahead of it has finished its prefill', async () => {
    const long = user('a long prompt about rivers and stones and quiet gardens in winter '.repeat(6));
    const { s, prefills } = scheduler(undefined, 16);
    const firsts: string[] = [];
    const a = run(s, long, { max_tokens: 2 }, () => firsts.push('long'));
    const b = run(s, user('x'), { max_tokens: 2 }, () => firsts.push('short'));
    await Promise.all([a.result, b.result]);
    expect(firsts.indexOf('short')).toBeLessThan(firsts.indexOf('long'));
    // The long prompt still ran in chunks of at most 16 tokens, its chunks around the short one's.
    expect(Math.max(...prefills)).toBeLessThanOrEqual(16);
  });

  it('frees a cancelled sequence\'s row by the next step', async () => {
    const { s, steps } = scheduler();
    const long = { ignore_eos: true, max_tokens: 200 };
    const seqs = [run(s, user('one'), long), run(s, user('two'), long), run(s, user('three'), long)];
    const outcomes = seqs.map((q) => q.result.catch((e) => e));
    while (Math.max(0, ...steps) < 3) await new Promise((r) => setImmediate(r));
    seqs[1].cancelled = true;
    const at = steps.length;
    await outcomes[0];
    expect(await outcomes[1]).toMatchObject({ code: 'cancelled' });
    // The first step after the cancel may already have started; the one after it runs 2 rows.
    expect(steps.slice(at + 1).every((rows) => rows <= 2)).toBe(true);
  });
});

describe('a failed batch change', () => {
  it('fails the sequences it was moving, joining ones included, instead of leaving them waiting', async () => {
    const spy = Object.create(lm) as CausalLM;
    let calls = 0;
    // The first join goes through; the second (a sequence joining a running batch) fails.
    spy.repack = (batch, keep, joining) => (++calls === 2 ? Promise.reject(new Error('the device copy failed')) : lm.repack(batch, keep, joining));
    const s = new Scheduler(spy);
    const first = run(s, user('one'), { ignore_eos: true, max_tokens: 50 });
    while (calls < 1) await new Promise((r) => setImmediate(r));
    const second = run(s, user('two'), { ignore_eos: true, max_tokens: 50 });
    const outcomes = await Promise.all([first.result, second.result].map((p) => p.then(() => 'done', (e: Error) => e.message)));
    expect(outcomes).toEqual(['the device copy failed', 'the device copy failed']);
  });
});

describe('the prefix cache', () => {
  it('reuses the KV of a shared system prompt and reports it as cached', async () => {
    const cache = new PrefixCache(lm.kvShape, 64 << 20);
    const system = { role: 'system', content: 'You are a helpful assistant who answers in short words. '.repeat(4) };
    const first = [system, ...user('What is fire?')];
    const second = [system, ...user('What is ice?')];
    const a = codec.encodeChat(first).ids;
    const b = codec.encodeChat(second).ids;
    let shared = 0;
    while (a[shared] === b[shared]) shared++;

    const { s, prefills } = scheduler(cache);
    const r1 = await run(s, first).result;
    const r2 = await run(s, second).result;
    expect(r1.cached_tokens).toBe(0);
    expect(r2.cached_tokens).toBe(shared);
    expect(prefills).toEqual([a.length, b.length - shared]);
    const { s: cold } = scheduler();
    expect(r2.text).toBe((await run(cold, second).result).text);
  });

  it('prefills prompts with cached prefixes of different lengths in one run, each with its text alone', async () => {
    const cache = new PrefixCache(lm.kvShape, 64 << 20);
    const long = { role: 'system', content: 'You are a helpful assistant who answers in short words. '.repeat(3) };
    const short = { role: 'system', content: 'Be brief and kind.' };
    const prompts = [[long, ...user('What is fire?')], [short, ...user('What is rain?')], [long, ...user('Why is ice cold?')], user('Hello there')];
    const { s: cold } = scheduler();
    const alone = [];
    for (const p of prompts) alone.push((await run(cold, p).result).text);

    const { s, prefillRuns } = scheduler(cache);
    await run(s, [long, ...user('warm up')]).result;
    await run(s, [short, ...user('warm up')]).result;
    const runs = prefillRuns.length;
    const together = await Promise.all(prompts.map((p) => run(s, p).result));
    expect(together.map((r) => r.text)).toEqual(alone);
    expect(together[0].cached_tokens).toBeGreaterThan(together[1].cached_tokens);
    expect(together[3].cached_tokens).toBeLessThan(together[1].cached_tokens);
    expect(Math.max(...prefillRuns.slice(runs))).toBeGreaterThan(1);
  });

  it('reuses the previous turn, reply included, in the next turn', async () => {
    const cache = new PrefixCache(lm.kvShape, 64 << 20);
    const { s } = scheduler(cache);
    const turn1 = user('Tell me about the sea.');
    const reply = await run(s, turn1).result;
    const turn2 = [...turn1, { role: 'assistant', content: reply.text }, ...user('And the sky?')];
    const r2 = await run(s, turn2).result;
    const prev = codec.encodeChat(turn1).ids.length + reply.completion_tokens - 1;
    expect(r2.cached_tokens).toBeGreaterThanOrEqual(prev - 1);
  });

  it('stays within its memory budget', async () => {
    const perToken = lm.kvShape.layers * 2 * lm.kvShape.kvHeads * lm.kvShape.headDim * 4;
    const cache = new PrefixCache(lm.kvShape, 60 * perToken);
    const { s } = scheduler(cache);
    for (const w of words) await run(s, user(w)).result;
    expect(cache.bytes).toBeLessThanOrEqual(60 * perToken);
    expect(cache.entries).toBeGreaterThan(0);
  });
});
