// Model files in the origin's storage: what storage() reports (called on the object
// `window.hearth` resolves to, as an app holds startHearth's), removeModel() evicting
// one model's files, and a quota too small for a download (CDP's
// Storage.overrideQuotaForOrigin, which Chromium enforces on writes but does not show
// in navigator.storage.estimate(), so the write hits QuotaExceededError): the model
// fails with the bytes needed and available, which the page's GET /v1/models/{id}, a
// request's 503 and the demo's status card all give, and none of its files are left.
// The check before a download against estimate() is tested in test/backends/web-cache.test.ts.
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

interface StorageReport {
  usage: number;
  quota: number;
  persisted: boolean;
  models: { id: string; bytes: number }[];
}

const ONNX_BYTES = { chat: 5_792_304, embed: 2_643_005 }; // models/fixtures/*/onnx/model.onnx

const storage = (page: Page) => page.evaluate('window.hearth.then((h) => h.storage())') as Promise<StorageReport>;
const cachedURLs = (page: Page) =>
  page.evaluate('caches.open("hearth-models-v1").then((c) => c.keys()).then((ks) => ks.map((r) => r.url))') as Promise<string[]>;
/** GET /v1/models/{id} in the page, as a client reads it. */
const modelObject = (page: Page, info: HearthInfo, id: string) =>
  page.evaluate(
    `fetch(${JSON.stringify(`/v1/models/${id}`)}, { headers: { authorization: ${JSON.stringify(`Bearer ${info.apiKey}`)} } }).then((r) => r.json())`,
  ) as Promise<{ status: string; status_detail?: string }>;

suite('model storage', () => {
  const browser = freshBrowser();
  let page: Page;
  let info: HearthInfo;

  beforeAll(async () => {
    ({ page, info } = await openDemo(browser.context, `${server.url}?device=wasm`));
  }, 240_000);

  it('storage() reports usage, quota, persistence and each model\'s bytes; removeModel() evicts that model\'s files only', async () => {
    const before = await storage(page);
    expect(before.usage).toBeGreaterThan(ONNX_BYTES.chat);
    expect(before.quota).toBeGreaterThan(before.usage);
    expect(typeof before.persisted).toBe('boolean');
    const bytes = Object.fromEntries(before.models.map((m) => [m.id, m.bytes]));
    expect(bytes['svc/tiny-chat']).toBeGreaterThan(ONNX_BYTES.chat);
    expect(bytes['svc/tiny-embed']).toBeGreaterThan(ONNX_BYTES.embed);

    await page.evaluate('window.hearth.then((h) => h.removeModel("svc/tiny-embed"))');
    const after = await storage(page);
    expect(after.models).toEqual([
      { id: 'svc/tiny-chat', bytes: bytes['svc/tiny-chat'] },
      { id: 'svc/tiny-embed', bytes: 0 },
    ]);
    const urls = await cachedURLs(page);
    expect(urls.some((u) => u.includes('/tiny-chat/'))).toBe(true);
    expect(urls.filter((u) => u.includes('/tiny-embed/'))).toEqual([]);
    // The loaded copy serves on.
    expect((await inPage(page, 'greedyChat', info)).status).toBe(200);
  }, 120_000);

  describe('with the quota 1 MB above what is used', () => {
    let cdp: Awaited<ReturnType<typeof browser.context.newCDPSession>>;
    const origin = () => new URL(server.url).origin;

    beforeAll(async () => {
      cdp = await browser.context.newCDPSession(page);
      const { usage } = await storage(page);
      await cdp.send('Storage.overrideQuotaForOrigin', { origin: origin(), quotaSize: usage + 1_000_000 });
    });

    afterAll(async () => {
      await cdp?.send('Storage.overrideQuotaForOrigin', { origin: origin() });
    });

    /** A tab that adds a hub embedding model (from the test mirror) to the shared engine: what its page says of it once settled. */
    async function addHubEmbedder(repo: string) {
      const hub = `${server.url}mirror`;
      const tab = await openDemo(browser.context, `${server.url}?device=wasm&hubModel=${repo}&hubTask=embedding&hub=${encodeURIComponent(hub)}`);
      const id = `svc/hub-${repo.split('/').pop()}`;
      const model = await modelObject(tab.page, tab.info, id);
      const request = await inPage(tab.page, 'post', tab.info, '/v1/embeddings', { model: id, input: 'hello' });
      // The demo's status card shows the reason under the model's id.
      const card = await tab.page
        .waitForFunction(`document.querySelector('#status tbody')?.textContent.includes(${JSON.stringify(model.status_detail ?? '?')})`, undefined, { timeout: 10_000 })
        .then(() => true, () => false);
      const urls = await cachedURLs(tab.page);
      await tab.page.close();
      return { model, request, card, leftover: urls.filter((u) => u.startsWith(hub)) };
    }

    function bytesIn(detail: string | undefined) {
      const m = /needs (\d+) bytes and (\d+) bytes are available/.exec(detail ?? '');
      expect(m, detail).not.toBeNull();
      return { needed: Number(m![1]), available: Number(m![2]) };
    }

    it('a download that overflows the quota fails: the bytes needed and available in status_detail, in the 503 and on the status card, none of its files left', async () => {
      const { model, request, card, leftover } = await addHubEmbedder('org/tiny-embed');
      expect(model.status).toBe('failed');
      const { needed } = bytesIn(model.status_detail);
      expect(needed).toBe(ONNX_BYTES.embed);
      expect(request.status).toBe(503);
      expect(request.body.error).toMatchObject({ type: 'unavailable_error', code: 'model_not_ready' });
      expect(request.body.error.message).toContain(model.status_detail);
      expect(card).toBe(true);
      // The model's small files were stored before its weights overflowed: evicted with them.
      expect(leftover).toEqual([]);
    }, 240_000);
  });
});
