// A grammar on a reasoning model's reply applies to the answer after the thinking: the
// designed fixtures (real Qwen3 tokenizer and templates, every token from the ONNX graph) think
// freely, then answer within a JSON schema or with a required tool call in Qwen3's syntax. The
// fixture is indifferent between the spellings of text a grammar forces (every token outside its
// chains scores the same), so it shows what a grammar leaves to the model: a call's fixed head
// and tail must come out in the tokenizer's own tokens, not one byte a token.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { THINKING_REPLY } from '../../../models/exports/thinking.js';
import { toolCallGrammar } from '../../../src/api/tools/syntax.js';
import { nodeBackend } from '../../../src/backends/node.js';
import { createEngine } from '../../../src/engine/engine.js';
import type { EngineApi, GenerateResult, GrammarSpec, SamplingParams } from '../../../src/engine/protocol.js';
import { exportFixtures, referenceTokenizer } from '../../helpers/exports.js';

const greedy: SamplingParams = {
  max_tokens: 200, temperature: 0, top_p: 1, top_k: -1, min_p: 0, presence_penalty: 0, frequency_penalty: 0,
  stop: [], stop_token_ids: [], ignore_eos: false, logprobs: -1,
};
const SCHEMA = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false };
const grammar: GrammarSpec = { type: 'json_schema', schema: JSON.stringify(SCHEMA), param: 'response_format' };
const replyTool = toolCallGrammar([{ name: 'reply', parameters: SCHEMA }], 'required', true, 'hermes');
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

  it('writes a required call in the tokenizer\'s own tokens, so it ends within 64 tokens of the thinking', async () => {
    const encode = async (text: string) => (await referenceTokenizer('qwen3-think-export')).encode(text, { add_special_tokens: false });
    for (const model of ['svc/qwen3-think-export', 'svc/qwen3-think-open-export']) {
      const r = await run(model, { grammar: replyTool, max_tokens: 64 });
      expect(r.finish_reason).toBe('stop');
      const answer = r.text.split('</think>')[1]!;
      expect(answer.trim()).toBe(`<tool_call>\n{"name": "reply", "arguments": {"answer": "${THINKING_REPLY.answer}"}}\n</tool_call>`);
      // The head up to the argument's value, as one forced text: each token the first of its encoding.
      const head = await encode('<tool_call>\n{"name": "reply", "arguments": {"answer": "');
      const at = r.token_ids.indexOf(head[0]!);
      expect(r.token_ids.slice(at, at + head.length)).toEqual(head);
      expect(r.token_ids.slice(-3)).toEqual([...(await encode('}}\n</tool_call>')), 151645]);
      expect(r.completion_tokens).toBeLessThanOrEqual(48);
    }
  });

  it('leaves a JSON schema answer after the same thinking as it was: the same JSON, in its own layout', async () => {
    const r = await run('svc/qwen3-think-export', { grammar, max_tokens: 64 });
    const [thinking, answer] = r.text.split('</think>');
    expect(thinking).toBe(`<think>${THINKING_REPLY.thinking}`);
    // (Before it, the whitespace the thinking gate allows after the close tag, two tokens at most.)
    expect(answer!.trim()).toBe(`{\n  "answer":"${THINKING_REPLY.answer}"\n}`);
    expect(r.finish_reason).toBe('stop');
  });
});
