// Drafts from a second model of the same tokenizer (a catalog entry's `draft`): greedy output is
// the target's own, token for token; a draft that is the target itself is always accepted; a
// smaller form of it (q4 of the same weights) is accepted in part, its cache cut back to the
// sequence after each rejection; a draft with another tokenizer fails the load, saying why.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeBackend } from '../../../src/backends/node.js';
import { createEngine } from '../../../src/engine/engine.js';
import type { CatalogEntry, EngineApi, GenerateResult, ModelStats, SamplingParams } from '../../../src/engine/protocol.js';
import { exportFixtures } from '../../helpers/exports.js';

const greedy = (more: Partial<SamplingParams> = {}): SamplingParams => ({
  temperature: 0, top_p: 1, top_k: -1, min_p: 0, presence_penalty: 0, frequency_penalty: 0,
  stop: [], stop_token_ids: [], ignore_eos: true, logprobs: -1, max_tokens: 40, ...more,
});

let engine: EngineApi;
let dir: string;
const entry = (id: string, name: string, dtype: string, more: Partial<CatalogEntry> = {}): CatalogEntry => ({
  id, task: 'chat', class: 'tiny', context_length: 4096, source: join(dir, name), dtype: { cpu: dtype }, price: { input_per_1m: 0, output_per_1m: 0 }, ...more,
});

beforeAll(async () => {
  dir = await exportFixtures();
  engine = createEngine(nodeBackend('cpu'), { kvCacheMb: 0 });
  await engine.load([
    entry('svc/plain', 'llama3-export', 'fp32', { speculative: 'off' }),
    entry('svc/q4', 'llama3-export', 'q4', { speculative: 'off' }),
    entry('svc/drafted-by-q4', 'llama3-export', 'fp32', { draft: 'svc/q4' }),
    entry('svc/drafted-by-itself', 'llama3-export', 'fp32', { draft: 'svc/plain' }),
    entry('svc/drafted-by-qwen', 'llama3-export', 'fp32', { draft: 'svc/qwen' }),
    entry('svc/qwen', 'qwen3-export', 'fp32'),
  ]);
  for (let i = 0; i < 600 && (await engine.models()).some((m) => m.status === 'starting'); i++) await new Promise((r) => setTimeout(r, 50));
}, 600_000);
afterAll(async () => engine?.dispose?.());

let n = 0;
const ask = (model: string, content: string, s = greedy()): Promise<GenerateResult> =>
  engine.generate({ id: `dm${n++}`, model, prompt: { messages: [{ role: 'user', content }] }, sampling: s }, () => undefined);
const stats = async (model: string): Promise<ModelStats> => (await engine.stats!()).models.find((m) => m.id === model)!;

const PROMPTS = ['What is fire?', 'Tell me about the sea and the stones in it.', 'x'];

describe('a draft model', () => {
  it('drafting with the target itself: every drafted token is accepted, and the output is the target’s', async () => {
    for (const p of PROMPTS) expect((await ask('svc/drafted-by-itself', p)).token_ids, p).toEqual((await ask('svc/plain', p)).token_ids);
    const s = await stats('svc/drafted-by-itself');
    expect(s.spec_drafted_tokens).toBeGreaterThan(0);
    expect(s.spec_accepted_tokens).toBe(s.spec_drafted_tokens);
  });

  it('drafting with the q4 form of the same weights: drafts accepted and rejected, the output still the target’s own', async () => {
    for (const p of PROMPTS) {
      for (const more of [{}, { max_tokens: 7 }, { temperature: 0.9, seed: 3 }]) {
        expect((await ask('svc/drafted-by-q4', p, greedy(more))).token_ids, `${p} ${JSON.stringify(more)}`).toEqual((await ask('svc/plain', p, greedy(more))).token_ids);
      }
    }
    const s = await stats('svc/drafted-by-q4');
    expect(s.spec_accepted_tokens).toBeGreaterThan(0);
    expect(s.spec_drafted_tokens).toBeGreaterThan(s.spec_accepted_tokens!);
  });

  it('with another tokenizer fails the load and says so', async () => {
    const bad = (await engine.models()).find((m) => m.id === 'svc/drafted-by-qwen')!;
    expect(bad.status).toBe('failed');
    expect(bad.detail).toBe('svc/drafted-by-qwen: its draft model svc/qwen has another tokenizer (the same text encodes to other tokens)');
  });
});
