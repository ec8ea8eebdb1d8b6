// What the engine keeps between requests stays within its budgets, and stats() (what /metrics
// shows) says how much: the prefix cache within --kv-cache-mb, the grammar cache within its
// count, on the real fixture model.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeBackend } from '../../src/backends/node.js';
import { createEngine } from '../../src/engine/engine.js';
import type { EngineApi, GenerateRequest, ModelStats, SamplingParams } from '../../src/engine/protocol.js';
import { fixtures } from '../helpers/fixtures.js';

const greedy: SamplingParams = {
  temperature: 0, top_p: 1, top_k: -1, min_p: 0, presence_penalty: 0, frequency_penalty: 0,
  stop: [], stop_token_ids: [], ignore_eos: false, logprobs: -1, max_tokens: 2,
};
let n = 0;
const req = (text: string, sampling: Partial<SamplingParams> = {}): GenerateRequest => ({ id: `r${n++}`, model: 'svc/tiny-chat', prompt: { text }, sampling: { ...greedy, ...sampling } });

let engine: EngineApi;
const stats = async (): Promise<ModelStats> => (await engine.stats!()).models.find((m) => m.id === 'svc/tiny-chat')!;

beforeAll(async () => {
  const dir = await fixtures();
  engine = createEngine(nodeBackend('cpu'), { kvCacheMb: 1 });
  await engine.load([{ id: 'svc/tiny-chat', task: 'chat', class: 'tiny', context_length: 2048, source: join(dir, 'tiny-chat'), price: { input_per_1m: 0, output_per_1m: 0 } }]);
  for (let i = 0; i < 200 && (await engine.models())[0]!.status === 'starting'; i++) await new Promise((r) => setTimeout(r, 50));
}, 60_000);
afterAll(() => engine?.dispose());

describe('cache budgets', () => {
  it('keeps the prefix cache within --kv-cache-mb however many distinct prompts pass, and counts its entries', async () => {
    const sentence = 'The river ran past the stone garden in winter, and the market was quiet. ';
    for (let i = 0; i < 16; i++) {
      await engine.generate(req(`${i} ${sentence.repeat(4)}`), () => {});
      const s = await stats();
      expect(s.kv_cache_capacity_bytes).toBe(2 ** 20);
      expect(s.kv_cache_bytes!).toBeLessThanOrEqual(s.kv_cache_capacity_bytes!);
    }
    const s = await stats();
    // The cache is full enough to have evicted: what 16 prompts stored does not all fit.
    expect(s.kv_cache_bytes!).toBeGreaterThan(s.kv_cache_capacity_bytes! / 2);
    expect(s.kv_cache_entries!).toBeGreaterThan(0);
    expect(s.kv_cache_entries!).toBeLessThan(16);
  });

  it('keeps at most its capacity of compiled grammars, the oldest freed first', async () => {
    expect(await stats()).toMatchObject({ grammar_cache_entries: 0, grammar_cache_capacity: 64 });
    for (let i = 1; i <= 70; i++) {
      await engine.generate(req('Code:', { grammar: { type: 'regex', pattern: `[a-c]{1,${i}}x`, param: 'regex' } }), () => {});
    }
    expect(await stats()).toMatchObject({ grammar_cache_entries: 64, grammar_cache_capacity: 64 });
  }, 60_000);
});
