// A real `hearth serve --store redis://…` whose redis freezes (SIGSTOP), resumes (SIGCONT),
// stops and starts again: requests are answered 503 store_unavailable with retry-after
// (never a 500, never a hang), and served again once redis is back, without a restart.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDIS_MISSING, redisServerBinary, startRedis, type TestRedis } from '../helpers/redis.js';
import { hearth, startServer, waitReady, type TestServer } from '../helpers/server.js';

const haveRedis = redisServerBinary() !== null;
if (!haveRedis) console.warn(REDIS_MISSING);

// Longer than any bounded refusal can take (the redis store's command timeout is 5 s): a
// request still unanswered by then hangs.
const HANG_MS = 30_000;

describe.skipIf(!haveRedis)('a server whose redis freezes or stops', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-redis-persist-'));
  let redis: TestRedis;
  let server: TestServer;
  let key = '';
  let served = 0;
  const store = () => ['--store', redis.url];

  const chat = async (i: number) => {
    const res = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'svc/tiny-chat', messages: [{ role: 'user', content: `Hello ${i}` }], max_tokens: 8, temperature: 0 }),
      signal: AbortSignal.timeout(HANG_MS),
    });
    if (res.status === 200) served++;
    return res;
  };

  async function expectStoreUnavailable(what: string): Promise<void> {
    const started = Date.now();
    const res = await chat(0);
    const body = (await res.json()) as { error: Record<string, unknown> };
    console.log(`${what}: ${res.status} ${String(body.error?.code)} after ${Date.now() - started} ms, retry-after ${res.headers.get('retry-after')}`);
    expect(res.status).toBe(503);
    expect(body.error).toMatchObject({ type: 'server_error', code: 'store_unavailable', param: null });
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(res.headers.get('x-request-id')).toBeTruthy();
  }

  async function servedAgain(): Promise<void> {
    const end = Date.now() + HANG_MS;
    for (;;) {
      const res = await chat(1);
      if (res.status === 200) return;
      expect(res.status).toBe(503);
      if (Date.now() > end) throw new Error('not served again after redis came back');
      await new Promise((r) => setTimeout(r, Number(res.headers.get('retry-after')) * 100));
    }
  }

  beforeAll(async () => {
    redis = await startRedis({ persistDir: dir });
    server = await startServer([...store(), '--rate-limit', '1000']);
    await waitReady(server.url);
    key = (await hearth(['keys', 'create', ...store(), '--name', 'outage', '--sandbox'])).trim().split('\n').pop()!;
  });
  afterAll(async () => {
    redis?.proc.kill('SIGCONT');
    expect(await server?.stop()).toBe(0);
    await redis?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('frozen with SIGSTOP: 503 store_unavailable within a bounded time; served again after SIGCONT', async () => {
    expect((await chat(0)).status).toBe(200);
    redis.proc.kill('SIGSTOP');
    try {
      await expectStoreUnavailable('redis frozen');
      expect((await fetch(`${server.url}/health`)).status).toBe(200); // needs no store
    } finally {
      redis.proc.kill('SIGCONT');
    }
    await servedAgain();
  }, 120_000);

  it('stopped and started again: 503 store_unavailable meanwhile; served again with the same keys and spend', async () => {
    const port = redis.port;
    await redis.stop();
    await expectStoreUnavailable('redis stopped');
    redis = await startRedis({ port, persistDir: dir });
    await servedAgain();
    // Everything served was charged, and nothing else: the account's usage counts each 200.
    const rows = JSON.parse(await hearth(['usage', '--json', ...store()])) as Array<{ name: string; requests: number }>;
    expect(rows.find((r) => r.name === 'outage')!.requests).toBe(served);
  }, 120_000);
});
