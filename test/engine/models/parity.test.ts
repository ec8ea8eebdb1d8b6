// Real exports' interfaces (fp16 KV and logits, q4 / q4f16 MatMulNBits, q8 MatMulInteger,
// num_logits_to_keep, no position_ids, Gemma's positions from 1, external data in one
// file and in chunks) with real tokenizers and chat templates: on the same folder, file
// and device, Hearth's greedy tokens are transformers.js's, and so is the prompt length.
// The prefix cache is off here: transformers.js prefills each whole prompt, and float16
// rounding (and q8's per-tensor activation scale) depends on how a prompt is split into
// runs, which on these random-weight models can flip a near-tie between two tokens.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeBackend } from '../../../src/backends/node.js';
import { createEngine } from '../../../src/engine/engine.js';
import type { ChatMessage, EngineApi, GenerateRequest, SamplingParams } from '../../../src/engine/protocol.js';
import { join } from 'node:path';
import { EXPORT_VARIANTS, NO_SYSTEM_ROLE, exportFixtures, referenceGreedy, referencePromptIds } from '../../helpers/exports.js';

const MAX_TOKENS = 8;
const greedy: SamplingParams = {
  max_tokens: MAX_TOKENS, temperature: 0, top_p: 1, top_k: -1, min_p: 0, presence_penalty: 0, frequency_penalty: 0,
  stop: [], stop_token_ids: [], ignore_eos: false, logprobs: -1,
};
const PROMPTS: ChatMessage[][] = [
  [{ role: 'user', content: 'Hello there' }],
  [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'Name three rivers of Europe.' }],
];
const CONCURRENT: ChatMessage[][] = ['fire', 'ice', 'wind', 'rock'].map((w) => [{ role: 'user', content: `What is ${w}?` }]);
/** Asked too where the four lead to one reply: Granite's template holds today's date, so on some days a random-weight model's replies to them meet. */
const RESERVE: ChatMessage[][] = ['Tell me a story about a lighthouse keeper.', 'List the planets, please.', 'Why?', 'Write a haiku on snow and sand.'].map((content) => [{ role: 'user', content }]);

const idOf = (name: string, dtype: string) => `svc/${name}-${dtype}`;
let engine: EngineApi;
let n = 0;

async function hearth(model: string, messages: ChatMessage[], template_kwargs?: Record<string, unknown>) {
  const req: GenerateRequest = { id: `p${n++}`, model, prompt: { messages, template_kwargs }, sampling: greedy };
  return engine.generate(req, () => undefined);
}

beforeAll(async () => {
  const dir = await exportFixtures();
  engine = createEngine(nodeBackend('cpu'), { kvCacheMb: 0 });
  const price = { input_per_1m: 0, output_per_1m: 0 };
  await engine.load(
    EXPORT_VARIANTS.map(([name, dtype]) => ({
      id: idOf(name, dtype), task: 'chat' as const, class: 'tiny', context_length: 4096,
      source: join(dir, name), dtype: { cpu: dtype }, price,
    })),
  );
  for (let i = 0; i < 600 && (await engine.models()).some((m) => m.status === 'starting'); i++) await new Promise((r) => setTimeout(r, 50));
  const states = await engine.models();
  expect(states.filter((m) => m.status !== 'ready').map((m) => `${m.id}: ${m.detail}`)).toEqual([]);
}, 120_000);

afterAll(() => engine?.dispose());

describe.each(EXPORT_VARIANTS)('%s %s', (name, dtype) => {
  const id = idOf(name, dtype);

  it("greedy tokens and prompt_tokens equal transformers.js's", async () => {
    const prompts = NO_SYSTEM_ROLE.has(name) ? PROMPTS.map((m) => m.filter((x) => x.role !== 'system')) : PROMPTS;
    const expected = await referenceGreedy(name, dtype, prompts, MAX_TOKENS);
    for (const [i, messages] of prompts.entries()) {
      const r = await hearth(id, messages);
      expect(r.prompt_tokens).toBe((await referencePromptIds(name, messages)).length);
      expect(r.token_ids).toEqual(expected[i]);
    }
  }, 60_000);

  // DynamicQuantizeLinear takes one scale for the whole activation tensor, so a q8 export's
  // rows change each other's rounding: batched and alone differ by the export's design.
  it.skipIf(dtype === 'q8')('gives each of 4 or more concurrent requests the tokens it gets alone', async () => {
    const prompts = [...CONCURRENT];
    const alone = [];
    for (const m of prompts) alone.push((await hearth(id, m)).token_ids);
    for (const m of RESERVE) {
      if (new Set(alone.map((t) => t.join())).size > 1) break;
      prompts.push(m);
      alone.push((await hearth(id, m)).token_ids);
    }
    const together = await Promise.all(prompts.map((m) => hearth(id, m)));
    expect(together.map((r) => r.token_ids)).toEqual(alone);
    expect(new Set(alone.map((t) => t.join())).size).toBeGreaterThan(1); // the prompts lead somewhere different
  }, 60_000);
});
