// Reasoning models through hearth/msw, read by the clients an application's suite uses: the
// AI SDK's openai-compatible provider (reasoningText apart from text), LangChain's ChatOpenAI
// (additional_kwargs.reasoning_content apart from content), a json_schema answer and a
// required tool call after the thinking, as test/integration/reasoning-clients.test.ts checks
// them over `hearth serve`. The designed fixtures' greedy reply is a known think block and a
// known answer, and the raw text of the same model through the same handlers is checked to be
// exactly those two with the tags, so the split is held to what the model really wrote.
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { AIMessageChunk } from '@langchain/core/messages';
import { tool as lcTool } from '@langchain/core/tools';
import { concat } from '@langchain/core/utils/stream';
import { ChatOpenAI } from '@langchain/openai';
import { generateText, Output, streamText, tool } from 'ai';
import { join } from 'node:path';
import OpenAI from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { THINKING_REPLY } from '../../models/exports/thinking.js';
import { exportFixtures } from '../helpers/exports.js';
import { useHearthMsw } from '../helpers/msw.js';
import { validateAgainst } from '../helpers/openapi.js';

const baseURL = 'https://api.example.test/v1';
const apiKey = `svc_live_${'a1B2'.repeat(8)}`;
useHearthMsw(baseURL, {
  models: async () => {
    const dir = await exportFixtures();
    return [join(dir, 'qwen3-think-export'), join(dir, 'qwen3-think-open-export')];
  },
});

const THINK = 'svc/qwen3-think-export';
const OPEN = 'svc/qwen3-think-open-export';
const THINKING = THINKING_REPLY.thinking.trim();
const ANSWER = THINKING_REPLY.answer;
const Answer = z.object({ answer: z.string() });
const ANSWER_SCHEMA = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false } as const;
type Reasoned = { reasoning_content?: string | null };

// Made per test: the clients keep the fetch they find when made, and MSW patches fetch in beforeAll.
const sdk = () => new OpenAI({ baseURL, apiKey, maxRetries: 0 });
const aiModel = (id: string) => createOpenAICompatible({ name: 'hearth', baseURL, apiKey, supportsStructuredOutputs: true }).chatModel(id);
const llm = (model = THINK) => new ChatOpenAI({ model, apiKey, temperature: 0, maxRetries: 0, configuration: { baseURL } });

/** Neither field may carry a tag, and the answer none of the thinking. */
function expectApart(reasoning: unknown, answer: unknown): void {
  for (const s of [reasoning, answer]) expect(String(s)).not.toMatch(/<\/?think>/);
  expect(String(answer)).not.toContain('greets');
}

describe('the raw reply of the reasoning fixtures through the MSW handlers', () => {
  it('is the designed think block then the designed answer, which the clients below read apart', async () => {
    const prompt = '<|im_start|>user\nHello there<|im_end|>\n<|im_start|>assistant\n';
    const c = await sdk().completions.create({ model: THINK, prompt, temperature: 0, max_tokens: 40 });
    expect(c.choices[0]!.text).toBe(`<think>${THINKING_REPLY.thinking}</think>\n\n${ANSWER}`);
  });
});

describe("reasoning models with the AI SDK's openai-compatible provider through hearth/msw", () => {
  it('generateText gives reasoningText apart from text, for both templates', async () => {
    for (const [id, tokens] of [[THINK, 15], [OPEN, 14]] as const) {
      const r = await generateText({ model: aiModel(id), prompt: 'Hello there', temperature: 0, maxRetries: 0 });
      expect([r.reasoningText, r.text, r.finishReason]).toEqual([THINKING, ANSWER, 'stop']);
      expect(r.usage.outputTokenDetails.reasoningTokens).toBe(tokens);
      expectApart(r.reasoningText, r.text);
    }
  });

  it('streamText streams reasoning parts, then text parts', async () => {
    for (const id of [THINK, OPEN]) {
      const result = streamText({ model: aiModel(id), prompt: 'Hello there', temperature: 0, maxRetries: 0 });
      const kinds: string[] = [];
      for await (const part of result.fullStream) if (part.type === 'reasoning-delta' || part.type === 'text-delta') kinds.push(part.type);
      expect(await result.reasoningText).toBe(THINKING);
      expect(await result.text).toBe(ANSWER);
      expect(kinds.filter((k) => k === 'reasoning-delta').length).toBeGreaterThan(5);
      expect(kinds.indexOf('text-delta')).toBe(kinds.lastIndexOf('reasoning-delta') + 1);
    }
  });

  it('generateText with Output.object gets an object of the schema, answered after the thinking', async () => {
    const r = await generateText({ model: aiModel(THINK), output: Output.object({ schema: Answer }), prompt: 'Hello there', temperature: 0, maxRetries: 0 });
    expect(r.finishReason).toBe('stop');
    expect(Answer.parse(r.output)).toEqual({ answer: ANSWER });
    expect(r.reasoningText).toBe(THINKING);
    expectApart(r.reasoningText, r.text);
  });

  it('generateText with a required tool gets a call whose input is the answer, and the thinking apart', async () => {
    const r = await generateText({
      model: aiModel(THINK),
      prompt: 'Hello there',
      tools: { reply: tool({ description: 'Send the reply', inputSchema: Answer }) },
      toolChoice: 'required',
      temperature: 0,
      maxRetries: 0,
    });
    expect(r.finishReason).toBe('tool-calls');
    expect(r.toolCalls.map((c) => [c.toolName, c.input])).toEqual([['reply', { answer: ANSWER }]]);
    expect(r.reasoningText).toBe(THINKING);
    expect(r.text).toBe('');
    expectApart(r.reasoningText, JSON.stringify(r.toolCalls[0]!.input));
  });
});

describe("reasoning models with LangChain's ChatOpenAI through hearth/msw", () => {
  it('invoke puts the thinking in additional_kwargs.reasoning_content and the answer in content', async () => {
    for (const model of [THINK, OPEN]) {
      const msg = await llm(model).invoke('Hello there');
      expect([msg.additional_kwargs.reasoning_content, msg.content]).toEqual([THINKING, ANSWER]);
      expect(msg.usage_metadata?.output_token_details?.reasoning).toBe(model === THINK ? 15 : 14);
      expectApart(msg.additional_kwargs.reasoning_content, msg.content);
    }
  });

  // .stream(), not `streaming: true`: that one counts tokens with tiktoken files it fetches from the network.
  it('stream gives chunks that gather into the same, the thinking first', async () => {
    let gathered: AIMessageChunk | undefined;
    const order: string[] = [];
    for await (const chunk of await llm().stream('Hello there')) {
      if (chunk.additional_kwargs.reasoning_content) order.push('reasoning');
      if (chunk.content) order.push('content');
      gathered = gathered ? concat(gathered, chunk) : chunk;
    }
    expect([gathered!.additional_kwargs.reasoning_content, gathered!.content]).toEqual([THINKING, ANSWER]);
    expect(order.indexOf('content')).toBe(order.lastIndexOf('reasoning') + 1);
  });

  it('withStructuredOutput parses the answer, the thinking kept on the raw message', async () => {
    const out = await llm().withStructuredOutput(Answer, { name: 'answer', method: 'jsonSchema', includeRaw: true }).invoke('Hello there');
    expect(out.parsed).toEqual({ answer: ANSWER });
    expect(out.raw.additional_kwargs.reasoning_content).toBe(THINKING);
    expectApart(out.raw.additional_kwargs.reasoning_content, out.raw.content);
  });

  it('bindTools gets a tool call whose arguments are the answer, the thinking apart', async () => {
    const reply = lcTool(async () => 'sent', { name: 'reply', description: 'Send the reply', schema: Answer });
    const msg = await llm().bindTools([reply], { tool_choice: 'required' }).invoke('Hello there');
    expect(msg.tool_calls?.map((c) => [c.name, c.args])).toEqual([['reply', { answer: ANSWER }]]);
    expect(msg.additional_kwargs.reasoning_content).toBe(THINKING);
    expect(msg.content).toBe('');
  });
});

describe('json_schema and tools after thinking with the openai SDK through hearth/msw', () => {
  it('parses a zod response_format answered after the thinking, for both templates', async () => {
    for (const model of [THINK, OPEN]) {
      const r = await sdk().chat.completions.parse({ model, messages: [{ role: 'user', content: 'Hello there' }], temperature: 0, response_format: zodResponseFormat(Answer, 'answer') });
      const message = r.choices[0]!.message as typeof r.choices[0]['message'] & Reasoned;
      expect(message.reasoning_content).toBe(THINKING);
      expect(message.parsed).toEqual({ answer: ANSWER });
      expect(JSON.parse(message.content!)).toEqual({ answer: ANSWER });
      expect(r.choices[0]!.finish_reason).toBe('stop');
      expectApart(message.reasoning_content, message.content);
    }
  });

  it('streams the thinking, then JSON of the schema, with the stream helper', async () => {
    const stream = sdk().chat.completions.stream({ model: THINK, messages: [{ role: 'user', content: 'Hello there' }], temperature: 0, response_format: zodResponseFormat(Answer, 'answer') });
    let reasoning = '';
    let content = '';
    for await (const chunk of stream) {
      const d = chunk.choices[0]?.delta as (OpenAI.ChatCompletionChunk.Choice.Delta & Reasoned) | undefined;
      if (d?.reasoning_content) expect(content).toBe('');
      reasoning += d?.reasoning_content ?? '';
      content += d?.content ?? '';
    }
    const final = await stream.finalChatCompletion();
    expect(reasoning).toBe(THINKING);
    expect(final.choices[0]!.message.parsed).toEqual({ answer: ANSWER });
    expect(JSON.parse(content)).toEqual({ answer: ANSWER });
  });

  it('makes a required tool call whose arguments parse and validate, read from the answer only', async () => {
    const tools: OpenAI.ChatCompletionTool[] = [{ type: 'function', function: { name: 'reply', parameters: ANSWER_SCHEMA, strict: true } }];
    const r = await sdk().chat.completions.create({ model: THINK, messages: [{ role: 'user', content: 'Hello there' }], temperature: 0, tools, tool_choice: 'required' });
    expect(validateAgainst('CreateChatCompletionResponse', r)).toEqual([]);
    const message = r.choices[0]!.message as typeof r.choices[0]['message'] & Reasoned;
    expect(r.choices[0]!.finish_reason).toBe('tool_calls');
    expect(message.reasoning_content).toBe(THINKING);
    expect(message.tool_calls).toHaveLength(1);
    const call = message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(call.function.name).toBe('reply');
    expect(Answer.strict().parse(JSON.parse(call.function.arguments))).toEqual({ answer: ANSWER });
    expectApart(message.reasoning_content, call.function.arguments);
    expect(message.content ?? '').toBe('');
  });
});
