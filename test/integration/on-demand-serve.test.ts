// `hearth serve --load on-demand` on the fixtures: every model starts unloaded (in /v1/models,
// /health and /status), the first request loads its model and is answered (never a 503 within
// the load timeout), concurrent requests share one load, `keep_alive: 0` unloads the model once
// its request ends, and a bad keep_alive is a 400 naming it on every route that takes it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatBody, startOnDemand, untilStatus, type OnDemandServer } from '../helpers/on-demand-server.js';

let s: OnDemandServer;
beforeAll(async () => {
  s = await startOnDemand(['--load', 'on-demand']);
});
afterAll(() => s?.stop());

describe('serve --load on-demand', () => {
  it('lists every model unloaded, with its size and no expiry, in /v1/models, /health and /status', async () => {
    const models = await s.models();
    for (const id of ['svc/tiny-chat', 'svc/tiny-embed', 'svc/tiny-rerank']) {
      expect(models[id]).toMatchObject({ status: 'unloaded', expires_at: null });
      expect(models[id]!.size_mb).toBeGreaterThan(0);
    }
    const health = (await (await fetch(`${s.server.url}/health`)).json()) as { models: Record<string, string>; model_details: Record<string, { status: string; size_mb: number }> };
    expect(health.models['svc/tiny-chat']).toBe('unloaded');
    expect(health.model_details['svc/tiny-chat']).toMatchObject({ status: 'unloaded', expires_at: null });
    const page = await (await fetch(`${s.server.url}/status`)).text();
    expect(page).toMatch(/svc\/tiny-chat<\/td>.*s-unloaded/);
    expect(await s.metric('hearth_models_loaded')).toBe(0);
  });

  it('answers a first request by loading its model, and sets its expiry from the server keep-alive (5m)', async () => {
    const before = Date.now() / 1000;
    const res = await s.post('/v1/chat/completions', chatBody());
    expect(res.status).toBe(200);
    const body = (await res.json()) as { choices: { message: { content: string } }[] };
    expect(body.choices[0]!.message.content.length).toBeGreaterThan(0);
    const chat = (await s.models())['svc/tiny-chat']!;
    expect(chat.status).toBe('ready');
    expect(chat.expires_at! - before).toBeGreaterThan(290);
    expect(chat.expires_at! - before).toBeLessThan(310);
    expect(await s.metric('hearth_model_loads_total', { model: 'svc/tiny-chat' })).toBe(1);
    expect(await s.metric('hearth_model_load_seconds', { model: 'svc/tiny-chat' })).toBeGreaterThan(0);
    expect(await s.metric('hearth_models_loaded')).toBe(1);
  });

  it('counts a request that loads its model once against the rate limit', async () => {
    const remaining = (r: Response) => Number(r.headers.get('x-ratelimit-remaining-requests'));
    const warm = await s.post('/v1/chat/completions', chatBody({ max_tokens: 4 }));
    expect(warm.status).toBe(200);
    const loading = await s.post('/v1/score', { model: 'svc/tiny-rerank', text_1: 'a', text_2: 'b' });
    expect(loading.status).toBe(200);
    expect(remaining(loading)).toBe(remaining(warm) - 1);
  });

  it('loads once for four concurrent requests for an unloaded model', async () => {
    const answers = await Promise.all([0, 1, 2, 3].map((i) => s.post('/v1/embeddings', { model: 'svc/tiny-embed', input: `text ${i}` })));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(await s.metric('hearth_model_loads_total', { model: 'svc/tiny-embed' })).toBe(1);
  });

  it('sends a stream for an unloaded model once it is ready: a 200 event stream, never a 503', async () => {
    await s.post('/admin/models/svc/tiny-chat/unload', {}, s.admin);
    const res = await s.post('/v1/chat/completions', chatBody({ stream: true }));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    const text = await res.text();
    expect(text).toMatch(/data: \[DONE\]/);
    expect(text).not.toMatch(/"error"/);
  });

  it('unloads the model as soon as a request with keep_alive 0 has been answered', async () => {
    const res = await s.post('/v1/rerank', { model: 'svc/tiny-rerank', query: 'q', documents: ['a', 'b'], keep_alive: 0 });
    expect(res.status).toBe(200);
    await untilStatus(s, 'svc/tiny-rerank', 'unloaded', 3_000);
    expect(await s.metric('hearth_model_unloads_total', { model: 'svc/tiny-rerank', reason: 'keep_alive' })).toBe(1);
  });

  it('keeps a model loaded with keep_alive -1 (no expiry) and takes "10m" as ten minutes', async () => {
    await s.post('/v1/embeddings', { model: 'svc/tiny-embed', input: 'x', keep_alive: -1 });
    expect((await s.models())['svc/tiny-embed']).toMatchObject({ status: 'ready', expires_at: null });
    const before = Date.now() / 1000;
    await s.post('/v1/embeddings', { model: 'svc/tiny-embed', input: 'x', keep_alive: '10m' });
    const left = (await s.models())['svc/tiny-embed']!.expires_at! - before;
    expect(left).toBeGreaterThan(590);
    expect(left).toBeLessThan(610);
  });

  it('refuses a bad keep_alive with a 400 naming it on every generating, embedding and scoring route', async () => {
    const routes: [string, Record<string, unknown>][] = [
      ['/v1/chat/completions', chatBody()],
      ['/v1/completions', { model: 'svc/tiny-chat', prompt: 'Hi' }],
      ['/v1/embeddings', { model: 'svc/tiny-embed', input: 'x' }],
      ['/generate', { text: 'Hi' }],
      ['/v1/responses', { model: 'svc/tiny-chat', input: 'Hi' }],
      ['/v1/messages', { model: 'svc/tiny-chat', max_tokens: 8, messages: [{ role: 'user', content: 'Hi' }] }],
      ['/v1/rerank', { model: 'svc/tiny-rerank', query: 'q', documents: ['a'] }],
      ['/v1/score', { model: 'svc/tiny-rerank', text_1: 'a', text_2: 'b' }],
    ];
    for (const [path, body] of routes) {
      for (const bad of ['soon', '5 minutes', true, {}]) {
        const res = await s.post(path, { ...body, keep_alive: bad });
        expect(res.status, `${path} keep_alive ${JSON.stringify(bad)}`).toBe(400);
        const text = await res.text();
        expect(text, path).toMatch(/keep_alive/);
        if (path !== '/v1/messages') expect(JSON.parse(text).error.param, path).toBe('keep_alive');
      }
    }
  });
});
