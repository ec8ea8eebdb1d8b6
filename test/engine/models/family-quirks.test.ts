// What the real families' files ask of the engine beyond the graph: Llama 3's several
// EOS ids in generation_config.json, Qwen3's thinking switch through the chat template's
// variables, Gemma's template that has no system role (it folds the system message into
// the first user turn), Mistral's and Gemma 2's templates that refuse a system message.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeBackend } from '../../../src/backends/node.js';
import { createEngine } from '../../../src/engine/engine.js';
import type { CatalogEntry, ChatMessage, EngineApi, SamplingParams } from '../../../src/engine/protocol.js';
import { exportFixtures, referencePromptIds } from '../../helpers/exports.js';

const greedy: SamplingParams = {
  max_tokens: 12, temperature: 0, top_p: 1, top_k: -1, min_p: 0, presence_penalty: 0, frequency_penalty: 0,
  stop: [], stop_token_ids: [], ignore_eos: false, logprobs: -1,
};
const price = { input_per_1m: 0, output_per_1m: 0 };
const HELLO: ChatMessage[] = [{ role: 'user', content: 'Hello there' }];
let dir: string;
let engine: EngineApi;
let n = 0;

const entry = (id: string, source: string, dtype = 'fp32'): CatalogEntry => ({ id, task: 'chat', class: 't', context_length: 4096, source, dtype: { cpu: dtype }, price });
const run = (model: string, messages: ChatMessage[], template_kwargs?: Record<string, unknown>) =>
  engine.generate({ id: `q${n++}`, model, prompt: { messages, template_kwargs }, sampling: greedy }, () => undefined);

async function ready(): Promise<void> {
  for (let i = 0; i < 600 && (await engine.models()).some((m) => m.status === 'starting'); i++) await new Promise((r) => setTimeout(r, 50));
  expect((await engine.models()).filter((m) => m.status !== 'ready')).toEqual([]);
}

beforeAll(async () => {
  dir = await exportFixtures();
  engine = createEngine(nodeBackend('cpu'), { kvCacheMb: 0 });
  await engine.load([
    entry('svc/llama3', join(dir, 'llama3-export'), 'q4'), entry('svc/qwen3', join(dir, 'qwen3-export')), entry('svc/gemma3', join(dir, 'gemma3-export')),
    entry('svc/mistral', join(dir, 'mistral-export'), 'q4'), entry('svc/gemma2', join(dir, 'gemma2-export')),
    entry('svc/smollm3', join(dir, 'smollm3-export')), entry('svc/granite', join(dir, 'granite-export')),
  ]);
  await ready();
}, 120_000);
afterAll(() => engine?.dispose());

describe('family quirks', () => {
  it("stops at any of generation_config.json's EOS ids, not only the first", async () => {
    const free = await run('svc/llama3', HELLO);
    expect(free.finish_reason).toBe('length');
    // The same checkpoint whose generation_config lists the 4th greedy token among three EOS ids.
    const folder = mkdtempSync(join(tmpdir(), 'hearth-eos-'));
    mkdirSync(join(folder, 'onnx'));
    for (const f of ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model_q4.onnx']) copyFileSync(join(dir, 'llama3-export', f), join(folder, f));
    const gen = JSON.parse(readFileSync(join(dir, 'llama3-export', 'generation_config.json'), 'utf8'));
    writeFileSync(join(folder, 'generation_config.json'), JSON.stringify({ ...gen, eos_token_id: [128001, free.token_ids[3], 128009] }));
    await engine.load([entry('svc/llama3-eos', folder, 'q4')]);
    await ready();
    const stopped = await run('svc/llama3-eos', HELLO);
    expect(stopped.finish_reason).toBe('stop');
    expect(stopped.token_ids).toEqual(free.token_ids.slice(0, 4));
  }, 60_000);

  it("passes chat_template_kwargs to the template: Qwen3's enable_thinking=false adds the empty think block", async () => {
    const thinking = await run('svc/qwen3', HELLO);
    const direct = await run('svc/qwen3', HELLO, { enable_thinking: false });
    expect(direct.prompt_text).toContain('<think>\n\n</think>\n\n');
    expect(thinking.prompt_text).not.toContain('<think>');
    expect(direct.prompt_tokens).toBe((await referencePromptIds('qwen3-export', HELLO, { enable_thinking: false })).length);
    expect(direct.prompt_tokens).toBeGreaterThan(thinking.prompt_tokens);
  });

  it("switches SmolLM3's reasoning mode by enable_thinking or by a /no_think flag in the system message", async () => {
    const thinking = await run('svc/smollm3', HELLO);
    const byKwarg = await run('svc/smollm3', HELLO, { enable_thinking: false });
    const byFlag = await run('svc/smollm3', [{ role: 'system', content: 'Be brief. /no_think' }, ...HELLO]);
    expect(thinking.prompt_text).toContain('Reasoning Mode: /think');
    expect(thinking.prompt_text).not.toContain('<think>');
    for (const r of [byKwarg, byFlag]) {
      expect(r.prompt_text).toContain('Reasoning Mode: /no_think');
      expect(r.prompt_text.endsWith('<|im_start|>assistant\n<think>\n\n</think>\n')).toBe(true);
    }
    expect(byKwarg.prompt_tokens).toBe((await referencePromptIds('smollm3-export', HELLO, { enable_thinking: false })).length);
  });

  it("dates Granite's default system message with strftime_now, as transformers.js renders it", async () => {
    const r = await run('svc/granite', HELLO);
    const today = new Date().toLocaleDateString('en-US', { month: 'long', day: '2-digit', year: 'numeric' });
    expect(r.prompt_text).toContain(`Today's Date: ${today}.`);
    expect(r.prompt_tokens).toBe((await referencePromptIds('granite-export', HELLO)).length);
  });

  it("renders Gemma's system message inside the first user turn, as its template does", async () => {
    const messages: ChatMessage[] = [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }];
    const r = await run('svc/gemma3', messages);
    expect(r.prompt_text).toBe('<bos><start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n<start_of_turn>model\n');
    expect(r.prompt_tokens).toBe((await referencePromptIds('gemma3-export', messages)).length);
  });

  it.each([
    ['svc/mistral', 'mistral-export', 'Conversation roles must alternate', '<s>[INST] Hello there [/INST]'],
    ['svc/gemma2', 'gemma2-export', 'System role not supported', '<bos><start_of_turn>user\nHello there<end_of_turn>\n<start_of_turn>model\n'],
  ])("refuses a system message where %s's template raises, naming messages, and renders user turns as it does", async (model, folder, refusal, rendered) => {
    const err = await run(model, [{ role: 'system', content: 'Be brief.' }, ...HELLO]).catch((e) => e);
    expect(err).toMatchObject({ code: 'invalid_value', param: 'messages' });
    expect(err.message).toContain(refusal);
    const r = await run(model, HELLO);
    expect(r.prompt_text).toBe(rendered);
    expect(r.prompt_tokens).toBe((await referencePromptIds(folder, HELLO)).length);
  });
});
