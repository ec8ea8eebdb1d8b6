// The AI SDK's @ai-sdk/anthropic and LangChain's ChatAnthropic at Anthropic's default base URL,
// answered in-process by hearth/msw's default handlers (any origin's /v1), as an application's
// Node test suite would run them beside the openai SDK at its own default: each answer is the same
// conversation's on /v1/chat/completions (greedy text, token counts, tool arguments).
import { createAnthropic } from '@ai-sdk/anthropic';
import { ChatAnthropic } from '@langchain/anthropic';
import { generateText, jsonSchema, streamText, tool } from 'ai';
import { setupServer } from 'msw/node';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hearthHandlers, type HearthHandlers } from '../../src/front/msw/index.js';

const MODEL = 'svc/tiny-chat';
const PROMPT = 'Tell me about the sea.';
const apiKey = `svc_live_${'a1B2'.repeat(8)}`;
const weather = { type: 'object' as const, properties: { city: { type: 'string', maxLength: 12 } }, required: ['city'], additionalProperties: false };

let handlers: HearthHandlers;
let server: ReturnType<typeof setupServer>;
const unhandled: string[] = [];

beforeAll(async () => {
  handlers = await hearthHandlers({ models: [MODEL] });
  server = setupServer(...handlers);
  server.listen({
    onUnhandledFrame({ frame }) {
      const data = frame.data as { request?: Request };
      if (data.request) unhandled.push(`${data.request.method} ${data.request.url}`);
      frame.errorWith(new Error('unhandled'));
    },
  });
}, 120_000);

afterAll(async () => {
  server?.close();
  await handlers?.close();
  expect(unhandled).toEqual([]);
});

// Made per call, after MSW patched fetch: the SDK keeps the fetch it finds.
const openai = () => new OpenAI({ apiKey, maxRetries: 0 });
const chat = (extra: Partial<OpenAI.ChatCompletionCreateParamsNonStreaming> = {}) =>
  openai().chat.completions.create({ model: MODEL, temperature: 0, max_tokens: 24, messages: [{ role: 'user', content: PROMPT }], ...extra });
const chatCall = async () => {
  const r = await chat({ max_tokens: 100, tools: [{ type: 'function', function: { name: 'get_weather', parameters: weather } }], tool_choice: { type: 'function', function: { name: 'get_weather' } } });
  const call = r.choices[0]!.message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
  return JSON.parse(call.function.arguments) as unknown;
};

describe('the AI SDK’s @ai-sdk/anthropic through hearth/msw', () => {
  const model = () => createAnthropic({ apiKey })(MODEL);

  it('generateText and streamText answer with chat’s greedy text and token counts', async () => {
    const r = await generateText({ model: model(), prompt: PROMPT, temperature: 0, maxOutputTokens: 24, maxRetries: 0 });
    const c = await chat();
    expect(r.text).toBe(c.choices[0]!.message.content);
    expect([r.usage.inputTokens, r.usage.outputTokens]).toEqual([c.usage!.prompt_tokens, c.usage!.completion_tokens]);
    const s = streamText({ model: model(), prompt: PROMPT, temperature: 0, maxOutputTokens: 24, maxRetries: 0 });
    let text = '';
    for await (const piece of s.textStream) text += piece;
    expect(text).toBe(r.text);
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
    expect(r.toolCalls.map((c) => [c.toolName, c.input])).toEqual([['get_weather', await chatCall()]]);
  });
});

describe('LangChain’s ChatAnthropic through hearth/msw', () => {
  it('invoke answers with chat’s greedy text and token counts, and bindTools calls the tool with chat’s arguments', async () => {
    const m = await new ChatAnthropic({ model: MODEL, apiKey, temperature: 0, maxTokens: 24, maxRetries: 0 }).invoke(PROMPT);
    const c = await chat();
    expect(m.content).toBe(c.choices[0]!.message.content);
    expect([m.usage_metadata?.input_tokens, m.usage_metadata?.output_tokens]).toEqual([c.usage!.prompt_tokens, c.usage!.completion_tokens]);
    const bound = new ChatAnthropic({ model: MODEL, apiKey, temperature: 0, maxTokens: 100, maxRetries: 0 }).bindTools(
      [{ name: 'get_weather', description: '', input_schema: weather }],
      { tool_choice: { type: 'tool', name: 'get_weather' } },
    );
    const t = await bound.invoke(PROMPT);
    expect(t.tool_calls?.map((x) => [x.name, x.args])).toEqual([['get_weather', await chatCall()]]);
  });
});
