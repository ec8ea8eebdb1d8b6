// The AI SDK's default OpenAI provider (it speaks the Responses API) in a real headless
// Chromium tab, answered by the page's own Hearth on WASM: the same greedy text whole and
// streamed.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, freshBrowser, openDemo, pageModuleCaller, startDemo, type DemoServer, type HearthInfo } from './harness.js';

const call = pageModuleCaller<typeof import('./page-responses-clients.js')>('page-responses-clients.ts');

describe.skipIf(!CHROMIUM)("the AI SDK's default OpenAI provider in the page", () => {
  let server: DemoServer;
  let page: Page;
  let info: HearthInfo;
  const browser = freshBrowser();

  beforeAll(async () => {
    server = await startDemo({}, ['ai', '@ai-sdk/openai']);
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
});
