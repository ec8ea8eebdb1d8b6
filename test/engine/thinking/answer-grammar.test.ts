// A grammar on a reasoning model's reply applies to the answer after the thinking: the
// designed fixtures (real Qwen3 tokenizer and templates, every token from the ONNX graph) think
// freely, then answer within a JSON schema or with a required tool call in Qwen3's syntax.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { THINKING_REPLY } from '../../../models/exports/thinking.js';
import { toolCallGrammar } from '../../../src/api/tools/syntax.js';
import { nodeBackend } from '../../../src/backends/node.js';
import { createEngine } from '../../../src/engine/engine.js';
import type { EngineApi, GenerateResult, GrammarSpec, SamplingParams } from '../../../src/engine/protocol.js';
import { exportFixtures } from '../../helpers/exports.js';

const greedy: SamplingParams = {
  max_tokens: 200, temperature: 0, top_p: 1, top_k: -1, min_p: 0, presence_penalty: 0, frequency_penalty: 0,
  stop: [], stop_token_ids: [], ignore_eos: false, logprobs: -1,
};
const SCHEMA = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false };
const grammar: GrammarSpec = { type: 'json_schema', schema: JSON.stringify(SCHEMA), param: 'response_format' };
const price = { input_per_1m: 0, output_per_1m: 0 };
let engine: EngineApi;
let n = 0;

function run(model: string, sampling: Partial<SamplingParams>, kwargs?: Record<string, unknown>): Promise<GenerateResult> {
  const prompt = { messages: [{ role: 'user', content: 'Hello there' }], template_kwargs: kwargs };
  return engine.generate({ id: `g${n++}`, model, prompt, sampling: { ...greedy, ...sampling } }, () => undefined);
}

beforeAll(async () => {
  const dir = await exportFixtures();
  engine = createEngine(nodeBackend('cpu'), { kvCacheMb: 0 });
  await engine.load(['qwen3-think-export', 'qwen3-think-open-export'].map((name) => ({ id: `svc/${name}`, task: 'chat' as const, class: 't', context_length: 4096, source: join(dir, name), price })));
  for (let i = 0; i < 600 && (await engine.models()).some((m) => m.status === 'starting'); i++) await new Promise((r) => setTimeout(r, 50));
  expect((await engine.models()).filter((m) => m.status !== 'ready')).toEqual([]);
}, 120_000);
afterAll(() => engine?.dispose());

describe('a grammar on a reasoning model', () => {
  it('holds a JSON schema to the answer: free thinking first, then JSON that validates', async () => {
    for (const model of ['svc/qwen3-think-export', 'svc/qwen3-think-open-export']) {
      const r = await run(model, { grammar });
      const [thinking, answer] = r.text.split('</think>');
      expect(thinking!.replace('<think>', '')).toBe(THINKING_REPLY.thinking);
      expect(JSON.parse(answer!)).toEqual({ answer: THINKING_REPLY.answer });
      expect(r.finish_reason).toBe('stop');
    }
  });

  it('applies from the first token when the prompt closed the block', async () => {
    const r = await run('svc/qwen3-think-export', { grammar }, { enable_thinking: false });
    expect(JSON.parse(r.text)).toEqual({ answer: THINKING_REPLY.answer });
    expect(r.reasoning_tokens).toBe(0);
  });

  it('leaves max_tokens to bound the thinking and the answer together', async () => {
    const r = await run('svc/qwen3-think-export', { grammar, max_tokens: 10 });
    expect([r.finish_reason, r.reasoning_tokens, r.text.startsWith('<think>')]).toEqual(['length', 10, true]);
  });

  it('holds a required tool call to the answer: free thinking, then a call with valid arguments', async () => {
    const r = await run('svc/qwen3-think-export', { grammar: toolCallGrammar([{ name: 'reply', parameters: SCHEMA }], 'required', true, 'hermes') });
    const [thinking, answer] = r.text.split('</think>');
    expect(thinking).toBe(`<think>${THINKING_REPLY.thinking}`);
    const call = /^\s*<tool_call>\n(\{[\s\S]*\})\n<\/tool_call>$/.exec(answer!);
    expect(JSON.parse(call![1]!)).toEqual({ name: 'reply', arguments: { answer: THINKING_REPLY.answer } });
    expect(r.finish_reason).toBe('stop');
  });
});
