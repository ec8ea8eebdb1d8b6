// Anthropic's SDK in a real headless Chromium tab (WASM), bundled into the page, its base URL
// the page's origin: messages.create, messages.stream, messages.countTokens and a tool call,
// answered in the tab by hearth/browser, each compared with the same conversation on
// /v1/chat/completions from the same page (greedy text, token counts, tool arguments); and a
// request without max_tokens refused in Anthropic's envelope. One page, one call.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, freshBrowser, openDemo, pageModuleCaller, startDemo, type DemoServer } from './harness.js';

const call = pageModuleCaller<typeof import('./page-messages.js')>('page-messages.ts');
type Flow = Awaited<ReturnType<typeof import('./page-messages.js').messagesFlow>>;

/** Anthropic's published stream grammar over event names (pings left out). */
const PUBLISHED_ORDER = /^message_start (content_block_start (content_block_delta )*content_block_stop )+message_delta message_stop$/;
const STOP: Record<string, string> = { stop: 'end_turn', length: 'max_tokens' };

const textOf = (m: Flow['created']) => m.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
const promptOf = (u: Flow['created']['usage']) => u.input_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0);

describe.skipIf(!CHROMIUM)('Anthropic’s SDK in the page (wasm)', () => {
  let server: DemoServer;
  let r: Flow;
  let clients: Awaited<ReturnType<typeof import('./page-messages.js').messagesClientsFlow>>;
  let errors: string[];
  const browser = freshBrowser();

  beforeAll(async () => {
    server = await startDemo({}, ['@anthropic-ai/sdk', '@ai-sdk/anthropic', 'ai', '@langchain/anthropic']);
    const tab = await openDemo(browser.context, `${server.url}?device=wasm`);
    errors = tab.errors;
    r = await call(tab.page, 'messagesFlow', tab.info);
    clients = await call(tab.page, 'messagesClientsFlow', tab.info);
  }, 300_000);

  afterAll(async () => {
    await server?.close();
  });

  it('messages.create answers with the chat completion’s greedy text, token counts and stop reason', () => {
    expect(r.created).toMatchObject({ type: 'message', role: 'assistant', model: 'svc/tiny-chat', stop_sequence: null });
    expect(r.created.id).toMatch(/^msg_/);
    expect(r.created.content).toEqual([{ type: 'text', text: r.chat.content }]);
    expect(r.chat.content!.length).toBeGreaterThan(0);
    expect(r.created.stop_reason).toBe(STOP[r.chat.finish]);
    expect([promptOf(r.created.usage), r.created.usage.output_tokens]).toEqual([r.chat.usage.prompt_tokens, r.chat.usage.completion_tokens]);
  });

  it('messages.stream sends Anthropic’s events in their published order, its text and final message the created one', () => {
    expect(r.events.filter((e) => e !== 'ping').join(' ')).toMatch(PUBLISHED_ORDER);
    expect(r.events.filter((e) => e === 'content_block_delta').length).toBeGreaterThan(3);
    expect(r.streamedText).toBe(textOf(r.created));
    expect(r.final.content).toEqual(r.created.content);
    expect([r.final.stop_reason, r.final.usage.output_tokens, promptOf(r.final.usage)]).toEqual([r.created.stop_reason, r.created.usage.output_tokens, promptOf(r.created.usage)]);
  });

  it('messages.countTokens gives the prompt tokens the message and chat report', () => {
    expect(r.counted).toEqual({ input_tokens: r.chat.usage.prompt_tokens });
    expect(r.counted.input_tokens).toBe(promptOf(r.created.usage));
  });

  it('calls a required tool with a tool_use block whose input is chat’s arguments', () => {
    expect(r.tool.stop_reason).toBe('tool_use');
    expect(r.chatToolArguments).toBeDefined();
    expect(r.tool.content).toEqual([{ type: 'tool_use', id: expect.stringMatching(/^toolu_/), name: 'get_weather', input: JSON.parse(r.chatToolArguments!) }]);
  });

  it('refuses a request without max_tokens with a 400 invalid_request_error in Anthropic’s envelope, with a request id', () => {
    expect(r.refused).toMatchObject({ badRequest: true, status: 400, body: { type: 'error', error: { type: 'invalid_request_error' } } });
    expect(r.refused!.body).toMatchObject({ error: { message: expect.stringContaining('max_tokens') } });
    expect(r.refused!.requestID).toMatch(/^req_/);
  });

  it('the AI SDK’s @ai-sdk/anthropic and LangChain’s ChatAnthropic answer with chat’s greedy text, token counts and tool arguments', () => {
    // The same conversation and tool as messagesFlow's, so chat's answers are r.chat's.
    const counts = [r.chat.usage.prompt_tokens, r.chat.usage.completion_tokens];
    expect(clients.ai).toEqual({ text: r.chat.content, usage: counts });
    expect(clients.aiTool).toEqual([['get_weather', JSON.parse(r.chatToolArguments!)]]);
    expect(clients.langchain).toEqual({ content: r.chat.content, usage: counts });
  });

  it('logged no page errors', () => {
    expect(errors).toEqual([]);
  });
});
