// The other clients that speak Anthropic's Messages API, against a real `hearth serve` on
// tiny-chat: the AI SDK's @ai-sdk/anthropic (generateText, streamText, a tool call; it sends its
// key as x-api-key) and LangChain's ChatAnthropic (invoke, stream, bindTools; over Anthropic's SDK
// 0.x, x-api-key too). Each answer is the same conversation's on /v1/chat/completions: greedy
// text, token counts, tool arguments. Both default max_tokens to 4096, past tiny-chat's 2048-token
// context, so each request names its own.
import { createAnthropic } from '@ai-sdk/anthropic';
import type { AIMessageChunk } from '@langchain/core/messages';
import { concat } from '@langchain/core/utils/stream';
import { ChatAnthropic } from '@langchain/anthropic';
import { generateText, jsonSchema, streamText, tool } from 'ai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSdkServer, type TestServer } from '../helpers/server.js';

const MODEL = 'svc/tiny-chat';
const PROMPT = 'Tell me about the sea.';
const weather = { type: 'object' as const, properties: { city: { type: 'string', maxLength: 12 } }, required: ['city'], additionalProperties: false };
let server: TestServer;
let key: string;
let openai: OpenAI;

beforeAll(async () => {
  ({ server, key, client: openai } = await startSdkServer('hearth-messages-clients-'));
}, 120_000);

afterAll(async () => {
  expect(await server?.stop()).toBe(0);
});

const chat = (extra: Partial<OpenAI.ChatCompletionCreateParamsNonStreaming> = {}) =>
  openai.chat.completions.create({ model: MODEL, temperature: 0, max_tokens: 24, messages: [{ role: 'user', content: PROMPT }], ...extra });
const chatCall = async () => {
  const r = await chat({ max_tokens: 100, tools: [{ type: 'function', function: { name: 'get_weather', parameters: weather } }], tool_choice: { type: 'function', function: { name: 'get_weather' } } });
  const call = r.choices[0]!.message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
  return JSON.parse(call.function.arguments) as unknown;
};

describe('the AI SDK’s @ai-sdk/anthropic provider', () => {
  const model = () => createAnthropic({ baseURL: `${server.url}/v1`, apiKey: key })(MODEL);

  it('generateText answers with chat’s greedy text and token counts', async () => {
    const r = await generateText({ model: model(), prompt: PROMPT, temperature: 0, maxOutputTokens: 24, maxRetries: 0 });
    const c = await chat();
    expect(r.text).toBe(c.choices[0]!.message.content);
    expect([r.usage.inputTokens, r.usage.outputTokens]).toEqual([c.usage!.prompt_tokens, c.usage!.completion_tokens]);
    expect(r.finishReason).toBe(c.choices[0]!.finish_reason === 'length' ? 'length' : 'stop');
  });

  it('streamText streams the same text', async () => {
    const r = streamText({ model: model(), prompt: PROMPT, temperature: 0, maxOutputTokens: 24, maxRetries: 0 });
    let text = '';
    for await (const piece of r.textStream) text += piece;
    expect(text).toBe((await chat()).choices[0]!.message.content);
  });

  it('calls a tool with chat’s arguments for the same forced call', async () => {
    const r = await generateText({
      model: model(),
      prompt: PROMPT,
      temperature: 0,
      maxOutputTokens: 100,
      maxRetries: 0,
      tools: { get_weather: tool({ inputSchema: jsonSchema(weather) }) },
      toolChoice: { type: 'tool', toolName: 'get_weather' },
    });
    expect(r.finishReason).toBe('tool-calls');
    expect(r.toolCalls.map((c) => [c.toolName, c.input])).toEqual([['get_weather', await chatCall()]]);
  });
});

describe('LangChain’s ChatAnthropic', () => {
  const llm = () => new ChatAnthropic({ model: MODEL, anthropicApiUrl: server.url, apiKey: key, temperature: 0, maxTokens: 24, maxRetries: 0 });

  it('invoke answers with chat’s greedy text and token counts', async () => {
    const m = await llm().invoke(PROMPT);
    const c = await chat();
    expect(m.content).toBe(c.choices[0]!.message.content);
    expect([m.usage_metadata?.input_tokens, m.usage_metadata?.output_tokens]).toEqual([c.usage!.prompt_tokens, c.usage!.completion_tokens]);
  });

  it('stream streams the same text', async () => {
    let whole: AIMessageChunk | undefined;
    for await (const chunk of await llm().stream(PROMPT)) whole = whole ? concat(whole, chunk) : chunk;
    expect(whole?.text).toBe((await chat()).choices[0]!.message.content);
  });

  it('bindTools calls the tool with chat’s arguments for the same forced call', async () => {
    const bound = new ChatAnthropic({ model: MODEL, anthropicApiUrl: server.url, apiKey: key, temperature: 0, maxTokens: 100, maxRetries: 0 }).bindTools(
      [{ name: 'get_weather', description: '', input_schema: weather }],
      { tool_choice: { type: 'tool', name: 'get_weather' } },
    );
    const m = await bound.invoke(PROMPT);
    expect(m.tool_calls?.map((c) => [c.name, c.args])).toEqual([['get_weather', await chatCall()]]);
  });
});
