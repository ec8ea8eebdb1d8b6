// /tokenize and /detokenize where no local tokenizer can answer, with the stub engine (the
// router's only fake engine, which does not tokenize): an upstream model is refused with 400
// naming `model` (its tokenizer is on the upstream), as is any model of an engine that cannot
// tokenize; a model still starting is 503, as on every route.
import { describe, expect, it } from 'vitest';
import { createRouter } from '../../src/api/router.js';
import type { CatalogEntry } from '../../src/engine/protocol.js';
import type { Runtime } from '../../src/types.js';
import { Upstreams, withUpstreams } from '../../src/upstream/registry.js';
import { AUTH, StubAccess } from './stub-access.js';
import { StubEngine, stubCatalog } from './stub-engine.js';

const REMOTE: CatalogEntry = {
  id: 'svc/remote',
  task: 'chat',
  class: '70B',
  context_length: 131072,
  source: 'upstream:org/Big',
  upstream: { urls: ['http://gpu.test/v1'], model: 'org/Big', probe_interval_ms: 60_000 },
  price: { input_per_1m: 1, output_per_1m: 2 },
};

async function setup() {
  const upstreams = new Upstreams({ env: () => undefined, transport: async () => Response.json({ object: 'list', data: [] }) });
  const catalog = [...stubCatalog(), REMOTE];
  const engine = withUpstreams(new StubEngine(), upstreams);
  await engine.load(catalog);
  while ((await engine.models()).find((m) => m.id === 'svc/remote')?.status !== 'ready') await new Promise((r) => setTimeout(r, 5));
  const runtime: Runtime = { engine, access: new StubAccess(), catalog: () => catalog, upstreams, close: async () => upstreams.close() };
  const app = createRouter(runtime);
  const post = async (path: string, body: unknown) => {
    const res = await app.fetch(new Request(`http://hearth.test${path}`, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body: JSON.stringify(body) }));
    return { status: res.status, error: ((await res.json()) as { error: { param: string | null; code: string | null; message: string } }).error };
  };
  return { post, close: () => upstreams.close() };
}

describe('tokens with no local tokenizer to ask (stub engine)', () => {
  it('refuses an upstream model with 400 naming model, on both routes', async () => {
    const { post, close } = await setup();
    const a = await post('/tokenize', { model: 'svc/remote', prompt: 'hi' });
    const b = await post('/detokenize', { model: 'svc/remote', tokens: [1] });
    expect([a.status, a.error.param, b.status, b.error.param]).toEqual([400, 'model', 400, 'model']);
    expect(a.error.message).toMatch(/upstream/);
    close();
  });

  it('refuses a local model of an engine that does not tokenize with 400 naming model, and a starting one with 503', async () => {
    const { post, close } = await setup();
    const local = await post('/tokenize', { model: 'svc/tiny-chat', prompt: 'hi' });
    expect([local.status, local.error.param]).toEqual([400, 'model']);
    expect((await post('/detokenize', { model: 'svc/warming', tokens: [1] })).status).toBe(503);
    close();
  });
});
