// Anthropic's SDK at its default base URL (https://api.anthropic.com) answered in-process by
// hearth/msw, as an application's Node test suite would run it: with the handlers' baseURL set
// to Anthropic's origin (messages.create, messages.stream, countTokens, models.list; other paths
// of that origin left unhandled), and with the handlers' default, beside the openai SDK at its
// own default base URL, the same conversation answered as chat completions answers it.
import Anthropic from '@anthropic-ai/sdk';
import { setupServer } from 'msw/node';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hearthHandlers, type HearthHandlers } from '../../src/front/msw/index.js';
import { GREEDY } from '../helpers/anthropic.js';

const MODEL = 'svc/tiny-chat';
const apiKey = `svc_live_${'a1B2'.repeat(8)}`;
const hello: Anthropic.MessageParam[] = [{ role: 'user', content: 'Tell me about the sea.' }];

/** hearth/msw behind setupServer for one describe block; requests it does not answer are recorded and failed. */
function useHandlers(baseURL?: string) {
  let handlers: HearthHandlers;
  let server: ReturnType<typeof setupServer>;
  const unhandled: string[] = [];
  beforeAll(async () => {
    handlers = await hearthHandlers({ ...(baseURL ? { baseURL } : {}), models: [MODEL] });
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
  });
  return unhandled;
}

// Made per test, after MSW patched fetch; the base URL is the SDK's own default.
const anthropic = () => {
  delete process.env.ANTHROPIC_BASE_URL;
  return new Anthropic({ apiKey, maxRetries: 0 });
};

const textOf = (m: Anthropic.Message) => m.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');

describe('hearth/msw with baseURL https://api.anthropic.com', () => {
  const unhandled = useHandlers('https://api.anthropic.com');

  it('answers messages.create and messages.stream at the SDK’s default base URL, the stream’s final message the created one', async () => {
    const params = { model: MODEL, max_tokens: 24, ...GREEDY, messages: hello };
    const created = await anthropic().messages.create(params);
    expect(created).toMatchObject({ type: 'message', role: 'assistant', model: MODEL });
    expect(created.id).toMatch(/^msg_/);
    const events: string[] = [];
    const stream = anthropic().messages.stream(params);
    stream.on('streamEvent', (e) => events.push(e.type));
    const final = await stream.finalMessage();
    expect(final.content).toEqual(created.content);
    expect(final.usage.output_tokens).toBe(created.usage.output_tokens);
    expect(events.join(' ')).toMatch(/^message_start content_block_start (content_block_delta )+content_block_stop message_delta message_stop$/);
    expect(unhandled).toEqual([]);
  });

  it('answers messages.countTokens with the message’s prompt tokens, and models.list in Anthropic’s shape', async () => {
    const counted = await anthropic().messages.countTokens({ model: MODEL, messages: hello });
    const m = await anthropic().messages.create({ model: MODEL, max_tokens: 4, ...GREEDY, messages: hello });
    expect(counted.input_tokens).toBe(m.usage.input_tokens + m.usage.cache_read_input_tokens!);
    const models = await anthropic().models.list();
    expect(models.data).toEqual([{ type: 'model', id: MODEL, display_name: 'tiny-chat', created_at: expect.any(String) }]);
    expect(unhandled).toEqual([]);
  });

  it('refuses a key that is not a Hearth key with authentication_error, and leaves Anthropic’s other paths unhandled', async () => {
    const err = await new Anthropic({ apiKey: 'sk-ant-api03-not-hearth', maxRetries: 0 }).messages.create({ model: MODEL, max_tokens: 4, messages: hello }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.AuthenticationError);
    expect((err as InstanceType<typeof Anthropic.AuthenticationError>).error).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    // Hearth's answers carry x-request-id; the callback's failure (msw 3 answers it with a 500) does not.
    const other = await fetch('https://api.anthropic.com/v1/files', { headers: { 'x-api-key': apiKey } }).then(
      (r) => (r.headers.get('x-request-id') ? r.status : 'not hearth'),
      () => 'not hearth',
    );
    expect(other).toBe('not hearth');
    expect(unhandled.splice(0)).toEqual(['GET https://api.anthropic.com/v1/files']);
  });
});

describe('hearth/msw with its default base URLs, Anthropic’s SDK beside the openai SDK', () => {
  const unhandled = useHandlers();
  const openai = () => new OpenAI({ apiKey, maxRetries: 0 });

  it('answers the same conversation as chat completions: greedy text and token counts', async () => {
    const m = await anthropic().messages.create({ model: MODEL, max_tokens: 24, ...GREEDY, system: 'Answer briefly.', messages: hello });
    const r = await openai().chat.completions.create({
      model: MODEL,
      max_tokens: 24,
      temperature: 0,
      messages: [
        { role: 'system', content: 'Answer briefly.' },
        { role: 'user', content: 'Tell me about the sea.' },
      ],
    });
    expect(textOf(m)).toBe(r.choices[0]!.message.content);
    expect([m.usage.input_tokens + m.usage.cache_read_input_tokens!, m.usage.output_tokens]).toEqual([r.usage!.prompt_tokens, r.usage!.completion_tokens]);
    expect(unhandled).toEqual([]);
  });

  it('calls a tool with chat’s arguments for the same required call', async () => {
    const input_schema = { type: 'object' as const, properties: { city: { type: 'string', maxLength: 12 } }, required: ['city'] };
    const m = await anthropic().messages.create({ model: MODEL, max_tokens: 100, ...GREEDY, messages: hello, tools: [{ name: 'get_weather', input_schema }], tool_choice: { type: 'tool', name: 'get_weather' } });
    const r = await openai().chat.completions.create({
      model: MODEL,
      max_tokens: 100,
      temperature: 0,
      messages: [{ role: 'user', content: 'Tell me about the sea.' }],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: input_schema } }],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
    });
    const call = r.choices[0]!.message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(m.stop_reason).toBe('tool_use');
    expect(m.content).toEqual([{ type: 'tool_use', id: expect.stringMatching(/^toolu_/), name: 'get_weather', input: JSON.parse(call.function.arguments) }]);
  });
});
