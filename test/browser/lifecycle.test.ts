// The in-tab runtime's life: weights served once and then loaded from the Cache API
// with the network refusing, an engine worker that dies mid-request and comes back,
// and requests made while a model loads (503 with the progress).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, freshBrowser, HEARTH_INFO, inPage, mirrorHits, openDemo, startDemo, type DemoServer } from './harness.js';

const suite = CHROMIUM ? describe : describe.skip;

let server: DemoServer;
/** While set, the dev server refuses /models/* (counted), as a network that is gone would. */
let refuseModels = false;
let refused = 0;

beforeAll(async () => {
  if (!CHROMIUM) return;
  server = await startDemo({
    gate: (url) => {
      if (refuseModels && url.startsWith('/models/')) {
        refused++;
        return false;
      }
      return true;
    },
  });
}, 180_000);

afterAll(async () => {
  await server?.close();
});

interface Progress {
  model: string;
  loaded: number;
  fromCache: boolean;
  done: boolean;
}

suite('the in-tab runtime over its life', () => {
  const browser = freshBrowser();

  it('after a reload, loads the weights from the Cache API with /models/* refused', async () => {
    // A dedicated engine ends with its page; a shared one could outlive the reload and never load again.
    const { page, info } = await openDemo(browser.context, `${server.url}?device=wasm&engine=dedicated`);
    const first = await inPage(page, 'greedyChat', info);
    expect(first.status).toBe(200);
    const firstLoad = (await page.evaluate('window.__hearthProgress')) as Progress[];
    expect(firstLoad.some((p) => !p.done && !p.fromCache && p.loaded > 0)).toBe(true);

    refuseModels = true;
    try {
      await page.reload();
      await page.waitForFunction('"hearth" in window');
      const again = (await page.evaluate(HEARTH_INFO)) as typeof info;
      const health = (await page.evaluate('fetch("/health").then((r) => r.json())')) as { models: Record<string, string> };
      expect(health.models).toEqual({ 'svc/tiny-chat': 'ready', 'svc/tiny-embed': 'ready' });
      const second = await inPage(page, 'greedyChat', again);
      expect(second.status).toBe(200);
      expect(second.body.choices[0].message.content).toBe(first.body.choices[0].message.content);
      const reload = (await page.evaluate('window.__hearthProgress')) as Progress[];
      const fileEvents = reload.filter((p) => !p.done);
      expect(fileEvents.length).toBeGreaterThan(0);
      expect(fileEvents.every((p) => p.fromCache)).toBe(true);
      // Nothing under /models/ was even asked for: it all came from the cache.
      expect(refused).toBe(0);
    } finally {
      refuseModels = false;
      await page.close();
    }
  }, 240_000);

  it('fails the request in flight with a clear error when the engine worker dies, and answers the next one from a fresh worker', async () => {
    const { page, info } = await openDemo(browser.context, `${server.url}?device=wasm`);
    const before = await inPage(page, 'greedyChat', info);
    const r = await inPage(page, 'crashDuringRequest', info);
    console.log(`[browser] worker crash: the request in flight failed ${r.failedAfterMs.toFixed(0)} ms after the crash`);
    // Nothing was wrong with the request: 503 with retry-after, as in Node, never a 500.
    expect(r.failed.status).toBe(503);
    expect(r.failed.body.error).toMatchObject({ type: 'unavailable_error', code: 'engine_restarting' });
    expect(Number(r.failed.headers['retry-after'])).toBeGreaterThan(0);
    expect(typeof r.failed.body.error.message).toBe('string');
    expect(r.after.status).toBe(200);
    expect(r.after.body.choices[0].message.content).toBe(before.body.choices[0].message.content);

    // A stream already under way ends with an error event rather than hanging.
    const s = await inPage(page, 'crashDuringStream', info);
    expect(s.status).toBe(200);
    expect(s.events).toBeGreaterThan(1);
    const last = s.last === 'data: [DONE]' ? s.last : JSON.parse(s.last.slice(6));
    expect(last).toMatchObject({ error: { type: 'unavailable_error', code: 'engine_restarting' } });
    expect((await inPage(page, 'greedyChat', info)).status).toBe(200);
    await page.close();
  }, 240_000);
});

suite('a model from the hub', () => {
  const browser = freshBrowser();

  it('is fetched file by file from the hub (a local mirror here) into the Cache API, and answers like the same model served locally', async () => {
    const hub = `${server.url}mirror`;
    const { page, info } = await openDemo(browser.context, `${server.url}?device=wasm&hubModel=svc/tiny-chat&hub=${encodeURIComponent(hub)}`);
    expect(info.models).toEqual(['svc/tiny-chat', 'svc/tiny-embed', 'svc/hub-tiny-chat']);
    expect(mirrorHits.some((u) => u.endsWith('/svc/tiny-chat/resolve/main/onnx/model.onnx'))).toBe(true);
    const local = await inPage(page, 'post', info, '/v1/chat/completions', { model: 'svc/tiny-chat', messages: [{ role: 'user', content: 'Hello!' }], temperature: 0 });
    const fromHub = await inPage(page, 'post', info, '/v1/chat/completions', { model: 'svc/hub-tiny-chat', messages: [{ role: 'user', content: 'Hello!' }], temperature: 0 });
    expect(fromHub.status).toBe(200);
    expect(fromHub.body.choices[0].message.content).toBe(local.body.choices[0].message.content);
    const cached = (await page.evaluate(
      'caches.open("hearth-models-v1").then((c) => c.keys()).then((ks) => ks.map((r) => r.url))',
    )) as string[];
    expect(cached).toContain(`${hub}/svc/tiny-chat/resolve/main/onnx/model.onnx`);
    expect(cached).toContain(`${hub}/svc/tiny-chat/resolve/main/tokenizer.json`);
    await page.close();
  }, 240_000);
});

suite('requests while a model loads', () => {
  const browser = freshBrowser(); // a fresh profile: nothing cached

  it('get 503 model_not_ready with the load progress in the message, then an answer; progress arrives as events', async () => {
    // nowait: window.hearth resolves before the models are loaded; throttle: a slow network.
    const { page, info } = await openDemo(browser.context, `${server.url}?device=wasm&nowait&throttle=100`);
    const r = await inPage(page, 'chatWhileLoading', info);
    expect(r.final.status).toBe(200);
    expect(r.notReady.length).toBeGreaterThan(0);
    for (const n of r.notReady) {
      expect(n.message).toMatch(/^The model `svc\/tiny-chat` is starting \(loading/);
      expect(Number(n.retryAfter)).toBeGreaterThanOrEqual(1);
    }
    expect(r.notReady.some((n) => /loading \d+% \([\d.]+ of [\d.]+ MB\)/.test(n.message))).toBe(true);
    const events = (await page.evaluate('window.__hearthProgress')) as Progress[];
    const chat = events.filter((e) => e.model === 'svc/tiny-chat');
    expect(chat.length).toBeGreaterThan(2);
    const loaded = chat.filter((e) => !e.done).map((e) => e.loaded);
    expect([...loaded].sort((a, b) => a - b)).toEqual(loaded);
    expect(chat.at(-1)!.done).toBe(true);
    await page.close();
  }, 240_000);
});
