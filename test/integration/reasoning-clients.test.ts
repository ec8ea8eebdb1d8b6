// Reasoning models through `hearth serve` (the engine in its worker, the designed fixtures'
// real ONNX graphs and Qwen3's real tokenizer and templates), read by the clients people use:
// the openai SDK (reasoning_content in replies and stream deltas), the AI SDK's
// openai-compatible provider (reasoningText) and LangChain's ChatOpenAI
// (additional_kwargs.reasoning_content); a JSON schema and a required tool call answered after
// the thinking; the raw endpoints left raw.
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { AIMessageChunk } from '@langchain/core/messages';
import { concat } from '@langchain/core/utils/stream';
import { ChatOpenAI } from '@langchain/openai';
import { generateText, streamText } from 'ai';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { THINKING_REPLY } from '../../models/exports/thinking.js';
import type { ChatMessage } from '../../src/engine/protocol.js';
import { exportFixtures, referencePromptIds } from '../helpers/exports.js';
import { validateAgainst } from '../helpers/openapi.js';
import { createKey, startServer, waitReady, type TestServer } from '../helpers/server.js';

const THINK = 'svc/qwen3-think-export';
const OPEN = 'svc/qwen3-think-open-export';
const THINKING = THINKING_REPLY.thinking.trim();
const ANSWER = THINKING_REPLY.answer;
const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Hello there' }];
type Reasoned = { reasoning_content?: string | null };

let server: TestServer;
let key: string;
let client: OpenAI;

beforeAll(async () => {
  const dir = await exportFixtures();
  const dataDir = await mkdtemp(join(tmpdir(), 'hearth-reasoning-'));
  key = await createKey(dataDir);
  server = await startServer(['--models', [join(dir, 'qwen3-think-export'), join(dir, 'qwen3-think-open-export')].join(',')], dataDir);
  await waitReady(server.url);
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: key, maxRetries: 0 });
}, 120_000);

afterAll(async () => {
  expect(await server?.stop()).toBe(0);
});

describe('reasoning models with the openai SDK over HTTP', () => {
  it('answers with the thinking in reasoning_content, the answer in content, and reasoning_tokens in usage', async () => {
    for (const [model, tokens] of [[THINK, 15], [OPEN, 14]] as const) {
      const r = await client.chat.completions.create({ model, messages, temperature: 0 });
      expect(validateAgainst('CreateChatCompletionResponse', r)).toEqual([]);
      const message = r.choices[0]!.message as typeof r.choices[0]['message'] & Reasoned;
      expect([message.reasoning_content, message.content, r.choices[0]!.finish_reason]).toEqual([THINKING, ANSWER, 'stop']);
      expect(r.usage!.completion_tokens_details?.reasoning_tokens).toBe(tokens);
      expect(r.usage!.completion_tokens).toBe(tokens + 11); // then "\n\n", the answer's 9 tokens and EOS
    }
  });

  it('streams reasoning_content deltas as the thinking is made, then content deltas', async () => {
    const stream = await client.chat.completions.create({ model: THINK, messages, temperature: 0, stream: true, stream_options: { include_usage: true } });
    const order: string[] = [];
    let reasoning = '';
    let content = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      usage ??= chunk.usage;
      const d = chunk.choices[0]?.delta as (OpenAI.ChatCompletionChunk.Choice.Delta & Reasoned) | undefined;
      if (d?.reasoning_content) (order.push('reasoning'), (reasoning += d.reasoning_content));
      if (d?.content) (order.push('content'), (content += d.content));
    }
    expect([reasoning, content]).toEqual([THINKING, ANSWER]);
    expect(order.filter((k) => k === 'reasoning').length).toBeGreaterThan(5); // token by token, not at the end
    expect(order.indexOf('content')).toBe(order.lastIndexOf('reasoning') + 1);
    expect(usage?.completion_tokens_details?.reasoning_tokens).toBe(15);
  });

  it('cuts a reply inside its thinking with finish_reason length, the thinking so far and empty content', async () => {
    const r = await client.chat.completions.create({ model: THINK, messages, temperature: 0, max_tokens: 5 });
    const message = r.choices[0]!.message as typeof r.choices[0]['message'] & Reasoned;
    expect([r.choices[0]!.finish_reason, message.reasoning_content, message.content]).toEqual(['length', 'The user greets', '']);
    expect(r.usage!.completion_tokens_details?.reasoning_tokens).toBe(5);
  });

  it('turns thinking off with reasoning_effort none, where the template can', async () => {
    const r = await client.chat.completions.create({ model: THINK, messages, temperature: 0, reasoning_effort: 'none' });
    const message = r.choices[0]!.message as typeof r.choices[0]['message'] & Reasoned;
    expect(message.reasoning_content ?? null).toBeNull();
    expect(message.content).toBe(ANSWER);
    expect(r.usage!.completion_tokens_details?.reasoning_tokens).toBe(0);
  });

  it('answers within a JSON schema after thinking freely', async () => {
    const Answer = z.object({ answer: z.string() });
    for (const model of [THINK, OPEN]) {
      const r = await client.chat.completions.parse({ model, messages, temperature: 0, response_format: zodResponseFormat(Answer, 'answer') });
      const message = r.choices[0]!.message as typeof r.choices[0]['message'] & Reasoned;
      expect(message.reasoning_content).toBe(THINKING);
      expect(message.parsed).toEqual({ answer: ANSWER });
      expect(r.choices[0]!.finish_reason).toBe('stop');
    }
  });

  it('makes a required tool call after thinking freely, read from the answer', async () => {
    const tools: OpenAI.ChatCompletionTool[] = [
      { type: 'function', function: { name: 'reply', parameters: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false } } },
    ];
    const r = await client.chat.completions.create({ model: THINK, messages, temperature: 0, tools, tool_choice: 'required' });
    const message = r.choices[0]!.message as typeof r.choices[0]['message'] & Reasoned;
    expect(r.choices[0]!.finish_reason).toBe('tool_calls');
    expect(message.reasoning_content).toBe(THINKING);
    const call = message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(call.function.name).toBe('reply');
    expect(JSON.parse(call.function.arguments)).toEqual({ answer: ANSWER });
  });

  it('gives the thinking of an assistant turn sent back to the template, which shows it after the last user turn', async () => {
    const call = { id: 'call_1', type: 'function' as const, function: { name: 'reply', arguments: '{"answer":"hi"}' } };
    const turns = (reasoning?: string): ChatMessage[] => [
      { role: 'user', content: 'Hello there' },
      { role: 'assistant', content: '', tool_calls: [{ ...call, function: { name: 'reply', arguments: { answer: 'hi' } } }], ...(reasoning ? { reasoning_content: reasoning } : {}) },
      { role: 'tool', content: 'sent', tool_call_id: 'call_1' },
    ];
    const sent: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'user', content: 'Hello there' },
      { role: 'assistant', content: '', tool_calls: [call], reasoning_content: THINKING } as OpenAI.ChatCompletionAssistantMessageParam,
      { role: 'tool', content: 'sent', tool_call_id: 'call_1' },
    ];
    const r = await client.chat.completions.create({ model: THINK, messages: sent, temperature: 0, max_tokens: 1 });
    const [withThinking, without] = [await referencePromptIds('qwen3-think-export', turns(THINKING)), await referencePromptIds('qwen3-think-export', turns())];
    expect(r.usage!.prompt_tokens).toBe(withThinking.length);
    expect(withThinking.length).toBeGreaterThan(without.length);
  });

  it('keeps the raw text on /v1/completions and /generate, which reports reasoning_tokens', async () => {
    const prompt = '<|im_start|>user\nHello there<|im_end|>\n<|im_start|>assistant\n';
    const raw = `<think>${THINKING_REPLY.thinking}</think>\n\n${ANSWER}`;
    const c = await client.completions.create({ model: THINK, prompt, temperature: 0, max_tokens: 40 });
    expect(c.choices[0]!.text).toBe(raw);
    const res = await fetch(`${server.url}/generate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: THINK, text: prompt, sampling_params: { temperature: 0, max_new_tokens: 40 } }),
    });
    const g = (await res.json()) as { text: string[]; meta_info: { reasoning_tokens?: number } };
    expect(g.text).toEqual([raw]);
    expect(g.meta_info.reasoning_tokens).toBe(15);
  });
});

describe("reasoning models with the AI SDK's openai-compatible provider", () => {
  const model = (id: string) => createOpenAICompatible({ name: 'hearth', baseURL: `${server.url}/v1`, apiKey: key }).chatModel(id);

  it('generateText gives reasoningText apart from text', async () => {
    const r = await generateText({ model: model(THINK), prompt: 'Hello there', temperature: 0 });
    expect([r.reasoningText, r.text, r.finishReason]).toEqual([THINKING, ANSWER, 'stop']);
    expect(r.usage.outputTokenDetails.reasoningTokens).toBe(15);
  });

  it('streamText streams reasoning parts, then text parts', async () => {
    const result = streamText({ model: model(OPEN), prompt: 'Hello there', temperature: 0 });
    const kinds: string[] = [];
    for await (const part of result.fullStream) if (part.type === 'reasoning-delta' || part.type === 'text-delta') kinds.push(part.type);
    expect(await result.reasoningText).toBe(THINKING);
    expect(await result.text).toBe(ANSWER);
    expect(kinds.indexOf('text-delta')).toBeGreaterThan(kinds.lastIndexOf('reasoning-delta'));
  });
});

describe("reasoning models with LangChain's ChatOpenAI", () => {
  const llm = () => new ChatOpenAI({ model: THINK, apiKey: key, temperature: 0, maxRetries: 0, configuration: { baseURL: `${server.url}/v1` } });

  it('invoke puts the thinking in additional_kwargs.reasoning_content and the answer in content', async () => {
    const msg = await llm().invoke('Hello there');
    expect([msg.additional_kwargs.reasoning_content, msg.content]).toEqual([THINKING, ANSWER]);
  });

  // .stream(), not `streaming: true`: that one counts tokens with tiktoken files it fetches from the network.
  it('stream gives chunks that gather into the same', async () => {
    let gathered: AIMessageChunk | undefined;
    for await (const chunk of await llm().stream('Hello there')) gathered = gathered ? concat(gathered, chunk) : chunk;
    expect([gathered!.additional_kwargs.reasoning_content, gathered!.content]).toEqual([THINKING, ANSWER]);
  });
});
