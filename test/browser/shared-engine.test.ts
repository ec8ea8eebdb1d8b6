// One engine per origin: the tabs of one browser context share the engine in a
// SharedWorker (the second tab loads no weights), each tab's requests are its own,
// and a page without SharedWorker falls back to its own dedicated worker.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, freshBrowser, inPage, openDemo, startDemo, type DemoServer, type HearthInfo } from './harness.js';

const suite = CHROMIUM ? describe : describe.skip;

let server: DemoServer;

beforeAll(async () => {
  if (!CHROMIUM) return;
  server = await startDemo();
}, 180_000);

afterAll(async () => {
  await server?.close();
});

interface Progress {
  model: string;
  loaded: number;
  done: boolean;
}

const health = (page: Page) => page.evaluate('fetch("/health").then((r) => r.json())') as Promise<Record<string, any>>;
const active = (page: Page) =>
  page.evaluate('window.hearth.then((h) => h.runtime.engine.stats()).then((s) => s.models.find((m) => m.id === "svc/tiny-chat").active)') as Promise<number>;

suite('tabs sharing one engine', () => {
  const browser = freshBrowser();
  let first: { page: Page; info: HearthInfo };
  let second: { page: Page; info: HearthInfo };

  beforeAll(async () => {
    first = await openDemo(browser.context, `${server.url}?device=wasm`);
    second = await openDemo(browser.context, `${server.url}?device=wasm`);
  }, 240_000);

  it('the second tab joins the engine the first started, without loading any model file', async () => {
    expect(first.info.engine).toBe('shared');
    expect(second.info.engine).toBe('shared');
    const loads = (page: Page) => page.evaluate('window.__hearthProgress') as Promise<Progress[]>;
    expect((await loads(first.page)).some((p) => !p.done && p.loaded > 0)).toBe(true);
    expect((await loads(second.page)).filter((p) => !p.done)).toEqual([]);
    const [a, b] = await Promise.all([inPage(first.page, 'greedyChat', first.info), inPage(second.page, 'greedyChat', second.info)]);
    expect(b.status).toBe(200);
    expect(b.body.choices[0].message.content).toBe(a.body.choices[0].message.content);
    // model_details (expiry, size: on-demand loading) rides beside these.
    expect(await health(second.page)).toMatchObject({
      status: 'ok',
      models: { 'svc/tiny-chat': 'ready', 'svc/tiny-embed': 'ready' },
      engine: { kind: 'shared', pages: 2 },
    });
  }, 120_000);

  it('closing a tab cancels its own stream only: the other tab streams on to the end', async () => {
    const tokens = 400;
    let stayingDone = false;
    const staying = inPage(first.page, 'generateStreamTiming', first.info, tokens).finally(() => (stayingDone = true));
    void inPage(second.page, 'generateStreamTiming', second.info, 1500).catch(() => undefined);
    await expect.poll(() => active(first.page), { timeout: 30_000 }).toBe(2);
    await second.page.close();
    // The closed tab's generation ends in the engine while the other's goes on.
    await expect.poll(() => active(first.page), { timeout: 30_000 }).toBe(1);
    expect(stayingDone).toBe(false);
    const r = await staying;
    expect(r.status).toBe(200);
    expect(r.done).toBe(true);
    expect(r.completionTokens).toBe(tokens);
    expect((await health(first.page)).engine).toEqual({ kind: 'shared', pages: 1 });
  }, 180_000);
});

suite('a page without SharedWorker', () => {
  const browser = freshBrowser();

  it('runs the engine in its own dedicated worker and serves as before', async () => {
    const { page, info } = await openDemo(browser.context, `${server.url}?device=wasm`, undefined, (p) => p.addInitScript('delete window.SharedWorker'));
    expect(info.engine).toBe('dedicated');
    expect((await health(page)).engine).toEqual({ kind: 'dedicated', pages: 1 });
    expect((await inPage(page, 'greedyChat', info)).status).toBe(200);
  }, 240_000);
});
