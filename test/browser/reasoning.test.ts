// A reasoning model in the tab (WASM): the designed Qwen3 fixture fetched from a hub mirror
// and run by onnxruntime-web in the engine's worker, answered in the page through MSW: the
// thinking in reasoning_content, the answer in content, in a reply and in a stream; a JSON
// schema that applies after the thinking; and the clients people use (the openai SDK, the AI
// SDK's reasoningText, LangChain's reasoning_content, tool calls) bundled into the page, their
// results compared whole with the same calls against the same model in Node (hearth/msw's
// handlers, onnxruntime-node).
import { getResponse } from 'msw';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { THINKING_REPLY } from '../../models/exports/thinking.js';
import { hearthHandlers } from '../../src/front/msw/index.js';
import { parseEvents } from '../api/harness.js';
import { exportFixtures } from '../helpers/exports.js';
import { CHROMIUM, freshBrowser, inPage, openDemo, pageModuleCaller, startDemo, type DemoServer } from './harness.js';
import { reasoningClients, type ReasoningClients } from './page-reasoning-clients.js';

const suite = CHROMIUM ? describe : describe.skip;
const MODEL = 'svc/hub-qwen3-think-export';
const BODY = { model: MODEL, messages: [{ role: 'user', content: 'Hello there' }], temperature: 0 };
const THINKING = THINKING_REPLY.thinking.trim();
const ANSWER = THINKING_REPLY.answer;
const inClientsPage = pageModuleCaller<typeof import('./page-reasoning-clients.js')>('page-reasoning-clients.ts');
/** What page-reasoning-clients.ts imports that the demo does not (see startDemo). */
const PAGE_DEPS = ['ai', '@ai-sdk/openai-compatible', '@langchain/openai', '@langchain/core/tools', '@langchain/core/utils/stream', 'zod'];
let server: DemoServer;

beforeAll(async () => {
  if (!CHROMIUM) return;
  await exportFixtures();
  server = await startDemo({}, PAGE_DEPS);
}, 180_000);

afterAll(async () => {
  await server?.close();
});

suite('a reasoning model in the tab (wasm)', () => {
  const browser = freshBrowser();

  it('answers with reasoning_content apart from content, and streams reasoning_content deltas before content', async () => {
    const hub = `${server.url}mirror`;
    const { page, info } = await openDemo(browser.context, `${server.url}?device=wasm&hubModel=test-org/qwen3-think-export&hub=${encodeURIComponent(hub)}`);
    expect(info.models).toContain(MODEL);
    const r = await inPage(page, 'post', info, '/v1/chat/completions', BODY);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.choices[0].message).toMatchObject({ reasoning_content: THINKING, content: THINKING_REPLY.answer });
    expect(r.body.usage.completion_tokens_details).toEqual({ reasoning_tokens: 15 });

    const s = await inPage(page, 'post', info, '/v1/chat/completions', { ...BODY, stream: true });
    const deltas = (parseEvents(s.body as unknown as string).slice(0, -1) as { choices: { delta: { reasoning_content?: string; content?: string } }[] }[])
      .flatMap((c) => c.choices.map((x) => x.delta));
    const reasoning = deltas.map((d) => d.reasoning_content ?? '').join('');
    const content = deltas.map((d) => d.content ?? '').join('');
    expect([reasoning, content]).toEqual([THINKING, THINKING_REPLY.answer]);
    expect(deltas.findIndex((d) => d.content)).toBeGreaterThan(deltas.findLastIndex((d) => d.reasoning_content));
    await page.close();
  }, 300_000);

  it('answers within a JSON schema after thinking freely (the grammar in the worker applies from </think>)', async () => {
    const hub = `${server.url}mirror`;
    const { page, info } = await openDemo(browser.context, `${server.url}?device=wasm&hubModel=test-org/qwen3-think-export&hub=${encodeURIComponent(hub)}`);
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false };
    const r = await inPage(page, 'post', info, '/v1/chat/completions', { ...BODY, response_format: { type: 'json_schema', json_schema: { name: 'answer', schema, strict: true } } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.choices[0].message.reasoning_content).toBe(THINKING);
    expect(JSON.parse(r.body.choices[0].message.content)).toEqual({ answer: THINKING_REPLY.answer });
    await page.close();
  }, 300_000);
});

suite('the clients people read a reasoning model with, in the tab (wasm)', () => {
  const browser = freshBrowser();
  let inNode: ReasoningClients;

  beforeAll(async () => {
    // The same calls against the same model in this process, through hearth/msw's handlers
    // (msw's getResponse, so nothing global is patched beside Vite and Playwright).
    const handlers = await hearthHandlers({ models: [join(await exportFixtures(), 'qwen3-think-export')] });
    try {
      const fetchInNode: typeof fetch = async (input, init) =>
        (await getResponse(handlers, new Request(input, init))) ?? new Response('unhandled by hearth/msw', { status: 599 });
      inNode = await reasoningClients({ baseURL: 'https://hearth.test/v1', apiKey: `svc_live_${'n0de'.repeat(8)}` }, 'svc/qwen3-think-export', fetchInNode);
    } finally {
      await handlers.close();
    }
  }, 180_000);

  it('the openai SDK, the AI SDK and LangChain read the thinking apart from the answer and the tool call, as in Node', async () => {
    const hub = `${server.url}mirror`;
    const { page, info, errors } = await openDemo(browser.context, `${server.url}?device=wasm&hubModel=test-org/qwen3-think-export&hub=${encodeURIComponent(hub)}`);
    expect(info.models).toContain(MODEL);
    const r = await inClientsPage(page, 'reasoningClients', info, MODEL);

    // The openai SDK: a reply, a stream (the thinking token by token, then the answer), a tool call.
    expect(r.openai.reply).toEqual({ reasoning: THINKING, content: ANSWER, finish: 'stop', reasoningTokens: 15, completionTokens: 26 });
    expect(r.openai.stream).toMatchObject({ reasoning: THINKING, content: ANSWER, reasoningTokens: 15 });
    expect(r.openai.stream.order).toHaveLength(2);
    expect(r.openai.stream.order[0]).toMatch(/^reasoning×([6-9]|\d\d)$/);
    expect(r.openai.stream.order[1]).toMatch(/^content×\d+$/);
    expect(r.openai.toolCall).toEqual({ finish: 'tool_calls', reasoning: THINKING, content: '', calls: [{ name: 'reply', arguments: expect.any(String) }] });
    expect(JSON.parse(r.openai.toolCall.calls[0]!.arguments)).toEqual({ answer: ANSWER });

    // The AI SDK's openai-compatible provider.
    expect(r.aiSdk.generateText).toEqual({ reasoningText: THINKING, text: ANSWER, finish: 'stop', reasoningTokens: 15 });
    expect(r.aiSdk.streamText).toMatchObject({ reasoningText: THINKING, text: ANSWER });
    expect(r.aiSdk.streamText.order.map((k) => k.split('×')[0])).toEqual(['reasoning-delta', 'text-delta']);
    expect(r.aiSdk.toolCall).toEqual({ finish: 'tool-calls', reasoningText: THINKING, text: '', calls: [{ name: 'reply', input: { answer: ANSWER } }] });

    // LangChain's ChatOpenAI.
    expect(r.langchain.invoke).toEqual({ reasoning: THINKING, content: ANSWER });
    expect(r.langchain.stream).toMatchObject({ reasoning: THINKING, content: ANSWER });
    expect(r.langchain.stream.order.map((k) => k.split('×')[0])).toEqual(['reasoning', 'content']);
    expect(r.langchain.bindTools).toEqual({ reasoning: THINKING, content: '', calls: [{ name: 'reply', args: { answer: ANSWER } }] });

    // No tag anywhere a client reads, and the thinking never in an answer or a call's arguments.
    const read = JSON.stringify(r);
    expect(read).not.toMatch(/<\/?think>/);
    for (const answer of [r.openai.reply.content, r.openai.toolCall.calls[0]!.arguments, JSON.stringify(r.aiSdk.toolCall.calls), JSON.stringify(r.langchain.bindTools.calls)]) {
      expect(answer).not.toContain('greets');
    }

    // Whole, the same as the same calls against the same model in Node.
    expect(r).toEqual(inNode);
    expect(errors).toEqual([]);
    await page.close();
  }, 300_000);
});
