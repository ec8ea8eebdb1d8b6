// The demo's hub model picker: it offers the catalog's tab-sized hub models the hub
// (the test mirror) has, with their download size; the one picked loads at once and
// again on the next visit. The mirror answers for svc/qwen2.5-0.5b's repo with the
// tiny-chat fixture (its weights under the q8 dtype's file name); the catalog's other
// tab-sized repos it does not have.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, freshBrowser, HEARTH_INFO, inPage, mirrorStandIns, openDemo, startDemo, type DemoServer } from './harness.js';

const suite = CHROMIUM ? describe : describe.skip;

let server: DemoServer;

beforeAll(async () => {
  if (!CHROMIUM) return;
  mirrorStandIns.set('Qwen2.5-0.5B-Instruct', 'tiny-chat');
  server = await startDemo();
}, 180_000);

afterAll(async () => {
  await server?.close();
  mirrorStandIns.clear();
});

suite('the demo\'s hub model picker', () => {
  const browser = freshBrowser();

  it('offers what the hub has with its download size, loads the one picked, and loads it again on the next visit', async () => {
    const url = `${server.url}?device=wasm&hub=${encodeURIComponent(`${server.url}mirror`)}`;
    const { page } = await openDemo(browser.context, url);
    await page.waitForSelector('#hub-model:not([disabled])', { timeout: 60_000 });
    const offered = await page.$$eval('#hub-model option', (os) => os.map((o) => (o as HTMLOptionElement).text));
    expect(offered).toEqual(['svc/qwen2.5-0.5b · 0.5B · 5.8 MB']);

    await page.selectOption('#hub-model', 'svc/qwen2.5-0.5b');
    await Promise.all([page.waitForEvent('load'), page.click('#hub-use')]);
    await page.waitForFunction('"hearth" in window');
    const info = (await page.evaluate(HEARTH_INFO)) as Awaited<ReturnType<typeof openDemo>>['info'];
    expect(info.models).toContain('svc/qwen2.5-0.5b');
    const reply = await inPage(page, 'post', info, '/v1/chat/completions', { model: 'svc/qwen2.5-0.5b', messages: [{ role: 'user', content: 'Hello!' }], temperature: 0 });
    expect(reply.status).toBe(200);
    await page.close();

    const next = await openDemo(browser.context, url);
    expect(next.info.models).toContain('svc/qwen2.5-0.5b');
    await next.page.waitForSelector('#hub-model:not([disabled])', { timeout: 60_000 });
    expect(await next.page.$eval('#hub-note', (e) => e.textContent)).toMatch(/^svc\/qwen2\.5-0\.5b is remembered/);
  }, 240_000);
});
