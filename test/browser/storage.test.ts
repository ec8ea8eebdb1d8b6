// Model files in the origin's storage: what storage() reports, removeModel() evicting
// one model's files, and a quota too small for a download (CDP's
// Storage.overrideQuotaForOrigin, which Chromium enforces on writes but does not show
// in navigator.storage.estimate(), so the write hits QuotaExceededError): the model
// fails with the bytes needed and available, and none of its files are left. The check
// before a download against estimate() is tested in test/backends/web-cache.test.ts.
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

const storage = (page: Page) => page.evaluate('window.__hearth.storage()') as Promise<StorageReport>;
const cachedURLs = (page: Page) =>
  page.evaluate('caches.open("hearth-models-v1").then((c) => c.keys()).then((ks) => ks.map((r) => r.url))') as Promise<string[]>;
const modelState = (page: Page, id: string) =>
  page.evaluate(`window.__hearth.runtime.engine.models().then((ms) => ms.find((m) => m.id === ${JSON.stringify(id)}))`) as Promise<{
    status: string;
    detail?: string;
  }>;

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

    await page.evaluate('window.__hearth.removeModel("svc/tiny-embed")');
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

    /** A tab that adds a hub model (from the test mirror) to the shared engine; its state once settled. */
    async function addHubModel(repo: string, task: 'chat' | 'embedding') {
      const hub = `${server.url}mirror`;
      const tab = await openDemo(browser.context, `${server.url}?device=wasm&hubModel=${repo}&hubTask=${task}&hub=${encodeURIComponent(hub)}`);
      const state = await modelState(tab.page, `svc/hub-${repo.split('/').pop()}`);
      const urls = await cachedURLs(tab.page);
      await tab.page.close();
      return { state, leftover: urls.filter((u) => u.startsWith(hub)) };
    }

    function bytesIn(detail: string | undefined) {
      const m = /needs (\d+) bytes and (\d+) bytes are available/.exec(detail ?? '');
      expect(m, detail).not.toBeNull();
      return { needed: Number(m![1]), available: Number(m![2]) };
    }

    it('a download that overflows the quota fails: status failed, the bytes needed and available in its detail, none of its files left', async () => {
      const { state, leftover } = await addHubModel('org/tiny-embed', 'embedding');
      expect(state.status).toBe('failed');
      const { needed } = bytesIn(state.detail);
      expect(needed).toBe(ONNX_BYTES.embed);
      // The model's small files were stored before its weights overflowed: evicted with them.
      expect(leftover).toEqual([]);
    }, 240_000);
  });
});
