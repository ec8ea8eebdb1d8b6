// The router with local and upstream models side by side: a request for a local
// model still reaches the engine (its body read after the routing looked at a copy),
// one for an upstream model goes out with the upstream's name and key, comes back
// under Hearth's id, and is charged once through the same access record.
import { describe, expect, it } from 'vitest';
import { createRouter } from '../../src/api/router.js';
import type { CatalogEntry } from '../../src/engine/protocol.js';
import type { Runtime } from '../../src/types.js';
import { Upstreams, withUpstreams } from '../../src/upstream/registry.js';
import { AUTH, StubAccess } from './stub-access.js';
import { StubEngine, stubCatalog } from './stub-engine.js';
import { parseEvents } from './harness.js';

const REMOTE: CatalogEntry = {
  id: 'svc/remote',
  task: 'chat',
  class: '70B',
  context_length: 131072,
  source: 'upstream:org/Big',
  upstream: { urls: ['http://gpu.test/v1'], model: 'org/Big', api_key_env: 'BIG_KEY', probe_interval_ms: 60_000 },
  price: { input_per_1m: 1, output_per_1m: 2 },
};

const sse = (events: unknown[]) =>
  new Response(events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('') + 'data: [DONE]\n\n', { headers: { 'content-type': 'text/event-stream' } });

async function setup() {
  const sent: { url: string; auth: string | null; body: Record<string, unknown> | null }[] = [];
  const upstreams = new Upstreams({
    env: (n) => (n === 'BIG_KEY' ? 'sk-big' : undefined),
    transport: async (url, init) => {
      const body = init.body ? (JSON.parse(String(init.body)) as Record<string, unknown>) : null;
      sent.push({ url, auth: new Headers(init.headers).get('authorization'), body });
      if (url.endsWith('/models')) return Response.json({ object: 'list', data: [] });
      if (JSON.stringify(body).includes('FAIL')) return Response.json({ error: { message: 'boom' } }, { status: 500 });
      if (body?.stream) {
        const base = { id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'org/Big' };
        return sse([
          { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' } }], usage: null },
          { ...base, choices: [{ index: 0, delta: { content: 'Hi' } }], usage: null },
          { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: null },
          { ...base, choices: [], usage: { prompt_tokens: 7, completion_tokens: 1, total_tokens: 8 } },
        ]);
      }
      return Response.json({
        id: 'c1',
        object: 'chat.completion',
        created: 1,
        model: 'org/Big',
        choices: [{ index: 0, message: { role: 'assistant', content: 'Hi there' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 },
      });
    },
  });
  const engine = new StubEngine();
  const access = new StubAccess();
  const catalog = [...stubCatalog(), REMOTE];
  const routed = withUpstreams(engine, upstreams);
  await routed.load(catalog);
  const runtime: Runtime = { engine: routed, access, catalog: () => catalog, upstreams, close: async () => upstreams.close() };
  while ((await routed.models()).find((m) => m.id === 'svc/remote')?.status !== 'ready') await new Promise((r) => setTimeout(r, 5));
  const app = createRouter(runtime);
  const post = (path: string, body: unknown) =>
    app.fetch(new Request(`http://hearth.test${path}`, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body: JSON.stringify(body) }));
  return { engine, access, sent, post, upstreams };
}

const messages = [{ role: 'user', content: 'Hello' }];

describe('routing between local and upstream models', () => {
  it('still serves a local model from the engine', async () => {
    const { engine, post, sent, upstreams } = await setup();
    const res = await post('/v1/chat/completions', { model: 'svc/tiny-chat', messages });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { model: string }).model).toBe('svc/tiny-chat');
    expect(engine.calls).toHaveLength(1);
    expect(sent.filter((s) => s.body)).toHaveLength(0);
    upstreams.close();
  });

  it('forwards an upstream model with its name and key, and charges its usage at its price', async () => {
    const { engine, access, post, sent, upstreams } = await setup();
    const res = await post('/v1/chat/completions', { model: 'svc/remote', messages, max_tokens: 5 });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { model: string; choices: { message: { content: string } }[] };
    expect(body.model).toBe('svc/remote');
    expect(body.choices[0]!.message.content).toBe('Hi there');
    const call = sent.find((s) => s.body)!;
    expect(call).toMatchObject({ url: 'http://gpu.test/v1/chat/completions', auth: 'Bearer sk-big', body: { model: 'org/Big', max_tokens: 5 } });
    expect(engine.calls).toHaveLength(0);
    expect(access.records).toHaveLength(1);
    expect(access.records[0]!.usage).toMatchObject({ model: 'svc/remote', prompt_tokens: 7, completion_tokens: 2, cost_usd: (7 * 1 + 2 * 2) / 1e6 });
    // Held at admission: the prompt at most its bytes ("user", "Hello") and 8 tokens for the
    // message's wrapping and 8 for the reply's header, plus 5 tokens out; then settled.
    expect(access.holds).toHaveLength(1);
    expect(access.holds[0]!.req).toMatchObject({ model: 'svc/remote', maxCostUsd: ((9 + 8 + 8) * 1 + 5 * 2) / 1e6 });
    expect(access.holds[0]!.settled).toBe(true);
    upstreams.close();
  });

  it('asks the upstream for stream usage, charges it, and gives the caller none unless asked', async () => {
    const { access, post, sent, upstreams } = await setup();
    const events = parseEvents(await (await post('/v1/chat/completions', { model: 'svc/remote', messages, stream: true })).text());
    expect(sent.find((s) => s.body)!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1) as Record<string, unknown>[];
    expect(chunks).toHaveLength(3);
    expect(chunks.every((c) => c.model === 'svc/remote' && !('usage' in c))).toBe(true);
    await new Promise((r) => setTimeout(r, 10));
    expect(access.records.map((r) => r.usage)).toMatchObject([{ model: 'svc/remote', prompt_tokens: 7, completion_tokens: 1 }]);
    expect(access.holds.map((h) => h.settled)).toEqual([true]);
    upstreams.close();
  });

  it('frees the hold, charging nothing, when the upstream refuses', async () => {
    const { access, post, upstreams } = await setup();
    const res = await post('/v1/chat/completions', { model: 'svc/remote', messages: [{ role: 'user', content: 'FAIL' }] });
    expect(res.status).toBe(502);
    expect(access.holds.map((h) => h.settled)).toEqual([true]);
    expect(access.records).toEqual([]);
    upstreams.close();
  });
});
