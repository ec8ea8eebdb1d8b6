// The AI SDK's default OpenAI provider (it speaks the Responses API) in a real headless
// Chromium tab, answered by the page's own Hearth on WASM: the same greedy text whole and
// streamed.
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../demo/config.js';
import { CHROMIUM, freshBrowser, openDemo, startDemo, type DemoServer, type HearthInfo } from './harness.js';

type PageModule = typeof import('./page-responses-clients.js');

function call<K extends keyof PageModule>(page: Page, fn: K, ...args: Parameters<PageModule[K]>): Promise<Awaited<ReturnType<PageModule[K]>>> {
  const module = `/@fs${join(REPO_ROOT, 'test/browser/page-responses-clients.ts')}`;
  return page.evaluate(`import(${JSON.stringify(module)}).then((m) => m[${JSON.stringify(fn)}](...${JSON.stringify(args)}))`) as never;
}

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
