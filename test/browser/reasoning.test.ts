// A reasoning model in the tab (WASM): the designed Qwen3 fixture fetched from a hub mirror
// and run by onnxruntime-web in the engine's worker, answered in the page through MSW: the
// thinking in reasoning_content, the answer in content, in a reply and in a stream; a JSON
// schema that applies after the thinking.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { THINKING_REPLY } from '../../models/exports/thinking.js';
import { parseEvents } from '../api/harness.js';
import { exportFixtures } from '../helpers/exports.js';
import { CHROMIUM, freshBrowser, inPage, openDemo, startDemo, type DemoServer } from './harness.js';

const suite = CHROMIUM ? describe : describe.skip;
const MODEL = 'svc/hub-qwen3-think-export';
const BODY = { model: MODEL, messages: [{ role: 'user', content: 'Hello there' }], temperature: 0 };
const THINKING = THINKING_REPLY.thinking.trim();
let server: DemoServer;

beforeAll(async () => {
  if (!CHROMIUM) return;
  await exportFixtures();
  server = await startDemo();
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
