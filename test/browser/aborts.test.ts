// A user's stop in the page is an abort, as it is over the network: the reader rejects
// with AbortError (the openai SDK throws APIUserAbortError, the AI SDK reports an abort),
// never a stream that ends as if complete; the engine stops generating, and the next
// request is served. Real headless Chromium against the demo (WASM).
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, freshBrowser, openDemo, pageModuleCaller, startDemo, type DemoServer, type HearthInfo } from './harness.js';

const call = pageModuleCaller<typeof import('./page-aborts.js')>('page-aborts.ts');

describe.skipIf(!CHROMIUM)('aborting a request in the page', () => {
  let server: DemoServer;
  let page: Page;
  let info: HearthInfo;
  const browser = freshBrowser();

  beforeAll(async () => {
    server = await startDemo({}, ['ai', '@ai-sdk/openai-compatible']);
    ({ page, info } = await openDemo(browser.context, `${server.url}?device=wasm`));
  }, 240_000);

  afterAll(async () => {
    await server?.close();
  });

  it("rejects a raw fetch stream's reader with AbortError, and the engine stops generating", async () => {
    const r = await call(page, 'rawFetchAbort', info);
    expect(r.rejected?.name).toBe('AbortError');
    expect(r.readsAfterAbort).toBeLessThanOrEqual(1);
    expect(r).toMatchObject({ active: 0, stepsAfterAbort: 0 });
    expect((await call(page, 'nextChat', info)).tokens).toBeGreaterThan(0);
  }, 60_000);

  it("makes the openai SDK throw APIUserAbortError for an aborted reply, and stop an aborted stream", async () => {
    const r = await call(page, 'sdkAbort', info);
    expect(r.thrown?.ctor).toBe('APIUserAbortError');
    expect(r.afterWhole).toEqual({ active: 0, stepsAfterAbort: 0 });
    expect(r.chunks).toBeLessThanOrEqual(4);
    expect(r.afterStream).toEqual({ active: 0, stepsAfterAbort: 0 });
    expect((await call(page, 'nextChat', info)).tokens).toBeGreaterThan(0);
  }, 60_000);

  it("ends the AI SDK's stream with an abort, not a finish, when its abortSignal fires", async () => {
    const r = await call(page, 'aiSdkAbort', info);
    expect(r.thrown?.name === 'AbortError' || r.aborted).toBe(true);
    expect(r.finished).toBe(false);
    expect(r).toMatchObject({ active: 0, stepsAfterAbort: 0 });
    expect((await call(page, 'nextChat', info)).tokens).toBeGreaterThan(0);
  }, 60_000);
});
