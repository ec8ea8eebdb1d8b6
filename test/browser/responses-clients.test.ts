// The clients that speak the Responses API by default in a real headless Chromium tab,
// answered by the page's own Hearth on WASM: the AI SDK's default OpenAI provider (the same
// greedy text whole and streamed) and the OpenAI Agents SDK (an agent with a function tool
// run to its final output).
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, freshBrowser, openDemo, pageModuleCaller, startDemo, type DemoServer, type HearthInfo } from './harness.js';

const call = pageModuleCaller<typeof import('./page-responses-clients.js')>('page-responses-clients.ts');

describe.skipIf(!CHROMIUM)('Responses API clients in the page', () => {
  let server: DemoServer;
  let page: Page;
  let info: HearthInfo;
  const browser = freshBrowser();

  beforeAll(async () => {
    server = await startDemo({}, ['ai', '@ai-sdk/openai', '@openai/agents', 'zod']);
    ({ page, info } = await openDemo(browser.context, `${server.url}?device=wasm`));
  }, 240_000);

  afterAll(async () => {
    await server?.close();
  });

  it('generates and streams the same greedy text through /v1/responses answered in the tab', async () => {
    const r = await call(page, 'aiSdkResponses', info);
    expect(r.text.length).toBeGreaterThan(0);
    expect(r.inputTokens).toBeGreaterThan(0);
    expect(r.parts).toBeGreaterThan(3);
    expect(r.streamed).toBe(r.text);
  }, 120_000);

  it('runs an OpenAI Agents SDK agent with a function tool to its final output, every turn answered in the tab', async () => {
    const r = await call(page, 'agentsSdkRun', info);
    expect(r.calls).toHaveLength(1);
    expect(typeof r.finalOutput).toBe('string');
    expect(r.items).toEqual(expect.arrayContaining(['tool_call_item', 'tool_call_output_item', 'message_output_item']));
    expect(r.responses).toBeGreaterThanOrEqual(2);
  }, 120_000);
});
