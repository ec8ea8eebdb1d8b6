// Models on demand in the tab: startHearth({ load: 'on-demand', maxLoadedModels: 1 }) reaches the
// engine in its worker: every model starts unloaded, the first request loads its model and is
// answered, and a request for the other model unloads the first (its sessions released, by the
// engine's own accounting) before loading its own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, freshBrowser, openDemo, pageModuleCaller, startDemo, type DemoServer } from './harness.js';

const suite = CHROMIUM ? describe : describe.skip;
const inOnDemandPage = pageModuleCaller<typeof import('./page-on-demand.js')>('page-on-demand.ts');

let server: DemoServer;
beforeAll(async () => {
  if (CHROMIUM) server = await startDemo();
}, 180_000);
afterAll(() => server?.close());

suite('models on demand in the tab', () => {
  const browser = freshBrowser();

  it('loads each model at its first request and evicts the idle one at maxLoadedModels 1', async () => {
    const { page, info, errors } = await openDemo(browser.context, `${server.url}?device=wasm&engine=dedicated&load=on-demand&maxLoadedModels=1`);
    const r = await inOnDemandPage(page, 'onDemandFlow', info);
    // (The demo's own page embeds a text as it starts: tiny-embed may be loading already.)
    expect(r.atStart.statuses['svc/tiny-chat']).toBe('unloaded');
    expect(r.atStart.engine['svc/tiny-chat']).toMatchObject({ loaded: false, loads: 0 });
    expect(r.afterChat.status, String(r.afterChat.body)).toBe(200);
    expect(r.afterChat.statuses).toEqual({ 'svc/tiny-chat': 'ready', 'svc/tiny-embed': 'unloaded' });
    expect(r.afterEmbed.status).toBe(200);
    expect(r.afterEmbed.statuses).toEqual({ 'svc/tiny-chat': 'unloaded', 'svc/tiny-embed': 'ready' });
    expect(r.afterEmbed.engine['svc/tiny-chat']).toMatchObject({ loaded: false, loads: 1, unloads: { evicted: 1 } });
    expect(r.afterEmbed.engine['svc/tiny-embed']).toMatchObject({ loaded: true });
    expect(errors).toEqual([]);
    await page.close();
  }, 180_000);
});
