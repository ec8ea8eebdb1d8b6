// An upstream model's hold is bounded by the request itself: the UTF-8 bytes of its
// texts plus 8 tokens a message (and 8 for the reply's header), never a prompt as long
// as the whole context. The entry has a 1,024-token context at 6 USD per 1M input tokens
// (0.6 out); the sandbox account has 0.00016 USD left. A context-long prompt would hold
// about 0.006 USD and refuse everything; a short message with 4 new tokens is bounded by
// (4 + 2 + 8 + 8) × 6 + 4 × 0.6 per 1M = 0.000134 USD and is served, and a 40-byte message
// (0.00036 USD) is refused without reaching the upstream. The router runs with the real
// access layer (memory store); the upstream is a scripted HTTP double, the one stand-in
// here, answering as an OpenAI-speaking server would.
import { describe, expect, it } from 'vitest';
import { createAccess } from '../../src/access/access.js';
import { createMemoryStore } from '../../src/access/memory-store.js';
import { createRouter } from '../../src/api/router.js';
import type { CatalogEntry } from '../../src/engine/protocol.js';
import type { Runtime } from '../../src/types.js';
import { Upstreams, withUpstreams } from '../../src/upstream/registry.js';
import { StubEngine } from './stub-engine.js';

const REMOTE: CatalogEntry = {
  id: 'svc/remote',
  task: 'chat',
  class: '70B',
  context_length: 1024,
  source: 'upstream:org/Big',
  upstream: { urls: ['http://gpu.test/v1'], model: 'org/Big', api_key_env: 'BIG_KEY', probe_interval_ms: 60_000 },
  price: { input_per_1m: 6, output_per_1m: 0.6 },
};
const CAP = 0.001;
const SPENT = 0.00084;

async function setup() {
  const forwarded: unknown[] = [];
  const upstreams = new Upstreams({
    env: () => 'sk-big',
    transport: async (url, init) => {
      if (url.endsWith('/models')) return Response.json({ object: 'list', data: [] });
      forwarded.push(JSON.parse(String(init.body)));
      return Response.json({
        id: 'c1',
        object: 'chat.completion',
        created: 1,
        model: 'org/Big',
        choices: [{ index: 0, message: { role: 'assistant', content: 'Hi there' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 },
      });
    },
  });
  const routed = withUpstreams(new StubEngine(), upstreams);
  await routed.load([REMOTE]);
  while ((await routed.models()).find((m) => m.id === 'svc/remote')?.status !== 'ready') await new Promise((r) => setTimeout(r, 5));
  const access = createAccess({ store: createMemoryStore(), sandboxCapUsd: CAP });
  const { key } = await access.createKey({ name: 'sandbox', sandbox: true });
  await access.record(await access.authenticate(`Bearer ${key}`), { model: 'svc/remote', prompt_tokens: 0, completion_tokens: 0, cost_usd: SPENT });
  const runtime: Runtime = { engine: routed, access, catalog: () => [REMOTE], upstreams, close: async () => upstreams.close() };
  const app = createRouter(runtime);
  const chat = (content: string) =>
    app.fetch(
      new Request('http://hearth.test/v1/chat/completions', {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'svc/remote', messages: [{ role: 'user', content }], max_tokens: 4 }),
      }),
    );
  return { access, chat, forwarded, close: () => (upstreams.close(), access.close()) };
}

describe('holds for an upstream model', () => {
  it('serves a request whose bound from its own text fits what the cap leaves', async () => {
    const { access, chat, forwarded, close } = await setup();
    const res = await chat('hi');
    expect(res.status).toBe(200);
    expect(forwarded).toHaveLength(1);
    const [u] = await access.usageThisMonth();
    expect(u).toMatchObject({ requests: 2, prompt_tokens: 9, completion_tokens: 2 });
    expect(u!.spend_usd).toBeCloseTo(SPENT + (9 * 6 + 2 * 0.6) / 1e6, 12);
    await close();
  });

  it('refuses one whose bound does not fit, before the upstream sees it', async () => {
    const { access, chat, forwarded, close } = await setup();
    const res = await chat('x'.repeat(40));
    expect(res.status).toBe(429);
    const { error } = (await res.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe('insufficient_quota');
    expect(error.message).toContain('could cost up to 0.0003624 USD'); // (4 + 40 + 8 + 8) × 6 + 4 × 0.6 per 1M
    expect(forwarded).toEqual([]);
    expect((await access.usageThisMonth())[0]).toMatchObject({ requests: 1 });
    await close();
  });
});
