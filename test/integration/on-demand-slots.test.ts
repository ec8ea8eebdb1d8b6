// `--max-loaded-models 1` on a real server: a request for another model unloads the least
// recently used idle one; a stream in flight is never cut for it (the other request waits and is
// answered once the stream has ended); with a short `--load-timeout-s` the waiting request gets
// 503 model_not_ready with retry-after.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatBody, startOnDemand, type OnDemandServer } from '../helpers/on-demand-server.js';

let roomy: OnDemandServer;
let hasty: OnDemandServer;
beforeAll(async () => {
  [roomy, hasty] = await Promise.all([
    startOnDemand(['--load', 'on-demand', '--max-loaded-models', '1']),
    startOnDemand(['--load', 'on-demand', '--max-loaded-models', '1', '--load-timeout-s', '0.2']),
  ]);
});
afterAll(() => Promise.all([roomy?.stop(), hasty?.stop()]));

const longStream = (s: OnDemandServer) => s.post('/v1/chat/completions', chatBody({ stream: true, max_tokens: 2000, ignore_eos: true }));
const statuses = async (s: OnDemandServer) => Object.fromEntries(Object.entries(await s.models()).map(([id, m]) => [id, m.status]));

describe('one loaded model at a time', () => {
  it('unloads the least recently used idle model to serve another', async () => {
    expect((await roomy.post('/v1/chat/completions', chatBody())).status).toBe(200);
    expect((await roomy.post('/v1/embeddings', { model: 'svc/tiny-embed', input: 'x' })).status).toBe(200);
    expect(await statuses(roomy)).toMatchObject({ 'svc/tiny-chat': 'unloaded', 'svc/tiny-embed': 'ready', 'svc/tiny-rerank': 'unloaded' });
    expect(await roomy.metric('hearth_model_unloads_total', { model: 'svc/tiny-chat', reason: 'evicted' })).toBe(1);
    expect(await roomy.metric('hearth_models_loaded')).toBe(1);
  });

  it('finishes a stream in flight while a request for another model waits for its slot, then serves that one', async () => {
    const stream = await longStream(roomy);
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    await reader.read(); // the stream is running: its model is busy
    let answered = 0;
    const other = roomy.post('/v1/rerank', { model: 'svc/tiny-rerank', query: 'q', documents: ['a'] }).then((r) => ((answered = Date.now()), r));
    let text = '';
    const decoder = new TextDecoder();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    const ended = Date.now();
    expect(text).toMatch(/"finish_reason":"length"/);
    expect(text).toMatch(/data: \[DONE\]/);
    expect(text).not.toMatch(/"error"/);
    const res = await other;
    expect(res.status).toBe(200);
    expect(answered).toBeGreaterThanOrEqual(ended - 50);
    expect(await statuses(roomy)).toMatchObject({ 'svc/tiny-chat': 'unloaded', 'svc/tiny-rerank': 'ready' });
  });

  it('answers 503 model_not_ready with retry-after once the load timeout passes with no slot free', async () => {
    // The chat model's own load may take longer than this server's timeout: it goes on after a
    // 503, so asking again finds it loaded.
    while ((await hasty.post('/admin/models/svc/tiny-chat/load', {}, hasty.admin)).status !== 200) await new Promise((r) => setTimeout(r, 100));
    const stream = await longStream(hasty);
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    await reader.read();
    const res = await hasty.post('/v1/embeddings', { model: 'svc/tiny-embed', input: 'x' });
    expect(res.status).toBe(503);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('model_not_ready');
    expect(body.error.message).toMatch(/tiny-embed/);
    await reader.cancel();
  });
});
