// hearth/msw's handlers match only Hearth's routes, so an app's safety net still works with
// them installed: msw 3's onUnhandledFrame (msw 2's onUnhandledRequest, in the Node 20
// package app) fires for a request to another host or to a path Hearth does not serve,
// and Hearth's own routes are answered.
import { setupServer } from 'msw/node';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { hearthHandlers, type HearthHandlers } from '../../src/front/msw/index.js';

const baseURL = 'https://api.example.test/v1';
const apiKey = `svc_live_${'a1B2'.repeat(8)}`;

/** setupServer with Hearth's handlers, recording what the app's unhandled callback saw (and
 * failing those requests, as `'error'` does but without its log, so that nothing reaches the network). */
function serverWith(handlers: HearthHandlers) {
  const unhandled: string[] = [];
  const server = setupServer(...handlers);
  server.listen({
    onUnhandledFrame({ frame }) {
      const data = frame.data as { request?: Request };
      if (data.request) unhandled.push(`${data.request.method} ${data.request.url}`);
      frame.errorWith(new Error('unhandled'));
    },
  });
  return { server, unhandled };
}

/** Hearth's status for a request, or 'not hearth' (the callback failed it: it never reaches the network). */
const settle = (url: string, init?: RequestInit) =>
  fetch(url, init).then(
    (r) => (r.headers.get('x-request-id') ? r.status : 'not hearth'),
    () => 'not hearth',
  );

describe('hearth/msw with a base URL', () => {
  let handlers: HearthHandlers;
  let app: ReturnType<typeof serverWith>;
  beforeAll(async () => {
    handlers = await hearthHandlers({ baseURL });
    app = serverWith(handlers);
  }, 120_000);
  afterEach(() => void app.unhandled.splice(0));
  afterAll(async () => {
    app?.server.close();
    await handlers?.close();
  });

  it('leaves a request to another host unhandled, so the app’s callback fires, and still answers its own routes', async () => {
    expect(await settle('https://other.example.test/x')).toBe('not hearth');
    expect(app.unhandled.splice(0)).toEqual(['GET https://other.example.test/x']);

    const client = new OpenAI({ baseURL, apiKey, maxRetries: 0 });
    const r = await client.chat.completions.create({ model: 'svc/tiny-chat', messages: [{ role: 'user', content: 'Hello!' }], temperature: 0, max_tokens: 4 });
    expect(r.object).toBe('chat.completion');
    expect((await client.models.list()).data.map((m) => m.id)).toContain('svc/tiny-embed');
    expect(await settle('https://api.example.test/health')).toBe(200);
    expect(app.unhandled).toEqual([]);
  });

  it('leaves the paths it does not serve unhandled, on its own host too', async () => {
    const asked = [
      'GET https://api.example.test/v1/charges',
      'POST https://api.example.test/v1/chat/completion',
      'GET https://api.example.test/status',
      'GET https://api.example.test/',
      'POST https://other.example.test/v1/chat/completions',
    ];
    for (const a of asked) {
      const [method, url] = a.split(' ') as [string, string];
      expect(await settle(url, { method, ...(method === 'POST' ? { body: '{}' } : {}) }), a).toBe('not hearth');
    }
    expect(app.unhandled).toEqual(asked);
  });

  it('answers a wrong method on its own route itself, with its 405', async () => {
    expect(await settle(`${baseURL}/chat/completions`, { method: 'GET', headers: { authorization: `Bearer ${apiKey}` } })).toBe(405);
    expect(app.unhandled).toEqual([]);
  });
});

describe('hearth/msw without a base URL', () => {
  let handlers: HearthHandlers;
  let app: ReturnType<typeof serverWith>;
  beforeAll(async () => {
    handlers = await hearthHandlers({ models: [] });
    app = serverWith(handlers);
  }, 120_000);
  afterAll(async () => {
    app?.server.close();
    await handlers?.close();
  });

  it("answers any origin's Hearth routes and leaves other paths there unhandled", async () => {
    const auth = { headers: { authorization: `Bearer ${apiKey}` } };
    expect(await settle('https://one.example.test/v1/models', auth)).toBe(200);
    expect(await settle('https://two.example.test/health')).toBe(200);
    expect(await settle('https://one.example.test/v1/charges', auth)).toBe('not hearth');
    expect(await settle('https://one.example.test/metrics')).toBe('not hearth');
    expect(app.unhandled).toEqual(['GET https://one.example.test/v1/charges', 'GET https://one.example.test/metrics']);
  });
});
