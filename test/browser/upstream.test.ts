// startHearth({ upstreams }) in a real Chromium tab: a model the tab does not run is
// forwarded to another Hearth (a real server process with its own keys) through the
// same MSW handlers, with the upstream key from the page's config; the page's key,
// which the upstream does not know, is never sent on.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, startServer, waitReady, type TestServer } from '../helpers/server.js';
import { CHROMIUM, freshBrowser, inPage, openDemo, startDemo, type DemoServer } from './harness.js';

const suite = CHROMIUM ? describe : describe.skip;

let demo: DemoServer;
let upstream: TestServer;
let upstreamKey: string;

beforeAll(async () => {
  if (!CHROMIUM) return;
  const dir = await mkdtemp(join(tmpdir(), 'hearth-page-upstream-'));
  upstreamKey = await createKey(dir, ['--name', 'page']);
  [demo, upstream] = await Promise.all([startDemo(), startServer(['--rate-limit', '10000'], dir)]);
  await waitReady(upstream.url);
}, 180_000);

afterAll(async () => {
  await demo?.close();
  await upstream?.stop('SIGTERM');
});

suite('a page with an upstream model', () => {
  const browser = freshBrowser();

  it('serves it through the page SDK with the upstream answers, and keeps the page key in the page', async () => {
    const query = new URLSearchParams({ device: 'wasm', upstream: `${upstream.url}/v1`, upstreamModel: 'svc/tiny-chat', upstreamKey });
    const { page, info, errors } = await openDemo(browser.context, `${demo.url}?${query}`);
    expect(info.models).toContain('svc/upstream');
    const r = await inPage(page, 'upstreamChat', info);

    const own = (await (
      await fetch(`${upstream.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${upstreamKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'svc/tiny-chat', messages: [{ role: 'user', content: 'Hello!' }], temperature: 0, max_tokens: 12 }),
      })
    ).json()) as { choices: { message: { content: string } }[] };
    expect(r.model).toBe('svc/upstream');
    expect(r.text).toBe(own.choices[0]!.message.content);
    expect(r.streamed).toBe(r.text);
    expect(r.chunks).toBeGreaterThan(2);

    const pageKeyThere = await fetch(`${upstream.url}/v1/models`, { headers: { authorization: `Bearer ${info.apiKey}` } });
    expect(pageKeyThere.status).toBe(401);
    expect(errors).toEqual([]);
  }, 240_000);
});
