// Speculative decoding through the engine, as every front door uses it (on by default): on the
// designed copying fixture a reply that copies its prompt takes a fraction of the graph runs;
// with and without speculation the same tokens come out, whether the step is greedy or sampled,
// cut by a stop string or max_tokens, constrained by a grammar, or asked for logprobs; and the
// cache a rejected draft leaves behind is what a prefix-cache hit then reads.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeBackend } from '../../../src/backends/node.js';
import { createEngine } from '../../../src/engine/engine.js';
import type { CatalogEntry, EngineApi, GenerateRequest, GenerateResult, ModelStats, SamplingParams } from '../../../src/engine/protocol.js';
import type { SpeculativeMode } from '../../../src/engine/spec/draft-policy.js';
import { COPYING_PASSAGE } from '../../../models/exports/copying.js';
import { exportFixtures } from '../../helpers/exports.js';
import { fixtures } from '../../helpers/fixtures.js';

const COPY = 'svc/copy';
const TINY = 'svc/tiny';
const THINK = 'svc/think';
const sampling = (more: Partial<SamplingParams> = {}): SamplingParams => ({
  temperature: 0, top_p: 1, top_k: -1, min_p: 0, presence_penalty: 0, frequency_penalty: 0,
  stop: [], stop_token_ids: [], ignore_eos: false, logprobs: -1, max_tokens: 80, ...more,
});

const entry = (id: string, source: string, more: Partial<CatalogEntry> = {}): CatalogEntry => ({
  id, task: 'chat', class: 'tiny', context_length: 4096, source, price: { input_per_1m: 0, output_per_1m: 0 }, ...more,
});

async function engineWith(mode: SpeculativeMode | undefined, kvCacheMb = 0): Promise<EngineApi> {
  const engine = createEngine(nodeBackend('cpu'), { kvCacheMb, ...(mode ? { speculative: mode } : {}) });
  const exportsDir = await exportFixtures();
  await engine.load([entry(COPY, join(exportsDir, 'qwen3-copy-export'), { reasoning: 'none' }), entry(TINY, join(await fixtures(), 'tiny-chat')), entry(THINK, join(exportsDir, 'qwen3-think-export'))]);
  for (let i = 0; i < 600 && (await engine.models()).some((m) => m.status === 'starting'); i++) await new Promise((r) => setTimeout(r, 50));
  for (const m of await engine.models()) if (m.status !== 'ready') throw new Error(`${m.id}: ${m.status} ${m.detail ?? ''}`);
  return engine;
}

let n = 0;
const ask = (engine: EngineApi, model: string, content: string, s: SamplingParams): Promise<GenerateResult> =>
  engine.generate({ id: `g${n++}`, model, prompt: { messages: [{ role: 'user', content }] }, sampling: s } satisfies GenerateRequest, () => undefined);

async function statsOf(engine: EngineApi, model: string): Promise<ModelStats> {
  for (;;) {
    const s = (await engine.stats!()).models.find((m) => m.id === model)!;
    if (s.active + s.queued === 0) return s;
    await new Promise((r) => setTimeout(r, 5));
  }
}

const REPEAT = `Repeat after me: ${COPYING_PASSAGE}`;
const LOOPY = 'abc abc abc abc abc abc abc abc';

let on: EngineApi;
let off: EngineApi;
beforeAll(async () => {
  [on, off] = await Promise.all([engineWith(undefined), engineWith('off')]);
}, 600_000);
afterAll(async () => {
  await on?.dispose?.();
  await off?.dispose?.();
});

describe('speculative decoding in the engine', () => {
  it('is on by default: a reply that copies its prompt is the same, from far fewer graph runs, its accepted drafts reported', async () => {
    const before = await statsOf(on, COPY);
    const fast = await ask(on, COPY, REPEAT, sampling());
    const after = await statsOf(on, COPY);
    const plain = await ask(off, COPY, REPEAT, sampling());
    expect(fast.text).toBe(COPYING_PASSAGE);
    expect(fast.token_ids).toEqual(plain.token_ids);
    expect(fast.finish_reason).toBe('stop');
    // 53 tokens (the passage and EOS): the first comes from the prompt's run, and (draft lengths
    // follow the step cost measured on this machine) at least half the others from accepted drafts.
    expect(fast.spec_accepted_tokens).toBeGreaterThanOrEqual(26);
    expect(plain.spec_accepted_tokens).toBe(0);
    const steps = after.decode_steps! - before.decode_steps!;
    expect(steps).toBeLessThanOrEqual(26);
    expect(after.spec_accepted_tokens! - before.spec_accepted_tokens!).toBe(fast.spec_accepted_tokens);
    expect(after.spec_drafted_tokens! - before.spec_drafted_tokens!).toBeGreaterThanOrEqual(fast.spec_accepted_tokens!);
    expect((await statsOf(off, COPY)).spec_drafted_tokens).toBe(0);
  });

  it('ends where max_tokens says, inside a draft', async () => {
    for (const max_tokens of [1, 2, 7, 30]) {
      const r = await ask(on, COPY, REPEAT, sampling({ max_tokens }));
      expect(r.token_ids, `max_tokens ${max_tokens}`).toEqual((await ask(off, COPY, REPEAT, sampling({ max_tokens }))).token_ids);
      expect(r.completion_tokens).toBe(max_tokens);
      expect(r.finish_reason).toBe('length');
    }
  });

  it('stops at a stop string or stop token inside a draft, as without speculation', async () => {
    for (const more of [{ stop: [' browser'] }, { stop: ['real graph'] }, { stop_token_ids: [(await ask(off, COPY, REPEAT, sampling({ max_tokens: 20 }))).token_ids[19]!] }]) {
      const [a, b] = [await ask(on, COPY, REPEAT, sampling(more)), await ask(off, COPY, REPEAT, sampling(more))];
      expect({ text: a.text, ids: a.token_ids, matched: a.matched_stop }, JSON.stringify(more)).toEqual({ text: b.text, ids: b.token_ids, matched: b.matched_stop });
      expect(a.finish_reason).toBe('stop');
    }
  });

  it('follows a grammar: a drafted token the grammar forbids ends the draft', async () => {
    const grammar = { type: 'regex' as const, pattern: 'Hearth runs language models on your own (desk|machine): inside one browser tab', param: 'response_format' };
    for (const model of [COPY, TINY]) {
      const prompt = model === COPY ? REPEAT : LOOPY;
      const [a, b] = [await ask(on, model, prompt, sampling({ grammar })), await ask(off, model, prompt, sampling({ grammar }))];
      expect(a.token_ids, model).toEqual(b.token_ids);
      expect(a.text).toBe(b.text);
    }
    const json = { type: 'json_object' as const, param: 'response_format' };
    const [a, b] = [await ask(on, TINY, LOOPY, sampling({ grammar: json, max_tokens: 40 })), await ask(off, TINY, LOOPY, sampling({ grammar: json, max_tokens: 40 }))];
    expect(a.token_ids).toEqual(b.token_ids);
  });

  it('reports the same logprobs, token by token', async () => {
    for (const [model, prompt] of [[COPY, REPEAT], [TINY, LOOPY]] as const) {
      const s = sampling({ logprobs: 3, max_tokens: 30 });
      const [a, b] = [await ask(on, model, prompt, s), await ask(off, model, prompt, s)];
      expect(a.token_ids).toEqual(b.token_ids);
      expect(a.logprobs!.map((l) => [l.token_id, l.top.map((t) => t.token_id)])).toEqual(b.logprobs!.map((l) => [l.token_id, l.top.map((t) => t.token_id)]));
      a.logprobs!.forEach((l, i) => expect(l.logprob).toBeCloseTo(b.logprobs![i]!.logprob, 4));
    }
  });

  it('keeps the sampler’s distribution: seeded draws give the same tokens, so the same frequencies', async () => {
    // Temperature 1.2 leaves the copying model's designed token about 80% a step: replies leave the passage at random places.
    const leftAt = (r: GenerateResult, passage: number[]) => r.token_ids.findIndex((t, i) => t !== passage[i]);
    const passage = (await ask(off, COPY, REPEAT, sampling())).token_ids;
    const histogram = (xs: number[]) => xs.reduce((h, x) => h.set(x, (h.get(x) ?? 0) + 1), new Map<number, number>());
    const [withSpec, without]: number[][] = [[], []];
    const drafted = (await statsOf(on, COPY)).spec_accepted_tokens!;
    for (let seed = 0; seed < 24; seed++) {
      const s = sampling({ temperature: 1.2, seed, max_tokens: 10 });
      const [a, b] = [await ask(on, COPY, REPEAT, s), await ask(off, COPY, REPEAT, s)];
      expect(a.token_ids, `seed ${seed}`).toEqual(b.token_ids);
      withSpec.push(leftAt(a, passage));
      without.push(leftAt(b, passage));
    }
    expect(histogram(withSpec)).toEqual(histogram(without));
    // The draws did go through verify steps, and drafts were accepted in them.
    expect((await statsOf(on, COPY)).spec_accepted_tokens!).toBeGreaterThan(drafted + 24);
    // On random weights (no designed margins) too, top-k and top-p draws by seed.
    for (let seed = 0; seed < 12; seed++) {
      const s = sampling({ temperature: 0.8, top_p: 0.9, top_k: 20, seed, max_tokens: 20 });
      expect((await ask(on, TINY, LOOPY, s)).token_ids, `seed ${seed}`).toEqual((await ask(off, TINY, LOOPY, s)).token_ids);
    }
  }, 300_000);

  it('leaves n generations of one prompt and a reasoning model’s split as they are without it', async () => {
    const s = sampling({ temperature: 0.8, seed: 5, max_tokens: 24 });
    const together = async (e: EngineApi) => (await Promise.all([1, 2, 3].map(() => ask(e, TINY, LOOPY, s)))).map((r) => r.token_ids);
    expect(await together(on)).toEqual(await together(off));
    const [a, b] = [await ask(on, THINK, 'Hello there', sampling()), await ask(off, THINK, 'Hello there', sampling())];
    expect({ ids: a.token_ids, thinking: a.thinking, reasoning: a.reasoning_tokens }).toEqual({ ids: b.token_ids, thinking: b.thinking, reasoning: b.reasoning_tokens });
    expect(a.reasoning_tokens).toBeGreaterThan(0);
  });

  it('rolls the cache back: after rejected drafts, a prefix-cache hit on the reply equals the same prompt run alone', async () => {
    const cached = await engineWith(undefined, 64);
    try {
      const first = await ask(cached, TINY, LOOPY, sampling({ max_tokens: 40, ignore_eos: true }));
      const stats = await statsOf(cached, TINY);
      expect(stats.spec_drafted_tokens!).toBeGreaterThan(stats.spec_accepted_tokens!); // some drafts were rejected
      // The next turn's prompt holds the first reply: its KV comes from the cache the verify steps left.
      const turn = (p: EngineApi) =>
        p.generate({ id: `t${n++}`, model: TINY, prompt: { messages: [{ role: 'user', content: LOOPY }, { role: 'assistant', content: first.text }, { role: 'user', content: 'again' }] }, sampling: sampling({ max_tokens: 30 }) }, () => undefined);
      const hit = await turn(cached);
      expect(hit.cached_tokens).toBeGreaterThan(0);
      const alone = await turn(off);
      expect(alone.cached_tokens).toBe(0);
      expect(hit.token_ids).toEqual(alone.token_ids);
    } finally {
      await cached.dispose?.();
    }
  }, 120_000);
});
