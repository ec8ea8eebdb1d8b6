// Two `hearth serve` processes on one redis (--store redis://…), as behind a load
// balancer: a key made by the CLI works on both, a rate limit is exact across them,
// spend recorded through both adds up in `hearth usage --store redis://…`, and a
// revocation through the CLI reaches both on their next request.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDIS_MISSING, redisServerBinary, startRedis, type TestRedis } from '../helpers/redis.js';
import { hearth, startServer, waitReady, type TestServer } from '../helpers/server.js';

const haveRedis = redisServerBinary() !== null;
if (!haveRedis) console.warn(REDIS_MISSING);

const PRICE = { input: 0.1, output: 0.4 }; // svc/tiny-chat, per 1M tokens (models/catalog.json)

describe.skipIf(!haveRedis)('two servers on one redis', () => {
  let redis: TestRedis;
  let servers: TestServer[] = [];
  const store = () => ['--store', redis.url];
  const newKey = async (extra: string[]) => (await hearth(['keys', 'create', ...store(), ...extra])).trim().split('\n').pop()!;

  beforeAll(async () => {
    redis = await startRedis();
    servers = await Promise.all([0, 1].map(() => startServer([...store(), '--rate-limit', '10'])));
    await Promise.all(servers.map((s) => waitReady(s.url)));
  });
  afterAll(async () => {
    const codes = await Promise.all(servers.map((s) => s.stop()));
    await redis?.stop();
    expect(codes).toEqual([0, 0]);
  });

  it('a key created by the CLI works on both; 30 requests across both against a limit of 10 admit exactly 10', async () => {
    const key = await newKey(['--name', 'limits']);
    expect(key).toMatch(/^svc_live_[0-9A-Za-z]{40}$/);
    const auth = { authorization: `Bearer ${key}` };
    const responses = await Promise.all(
      Array.from({ length: 30 }, (_, i) => fetch(`${servers[i % 2]!.url}/v1/models`, { headers: auth })),
    );
    const ok = responses.filter((r) => r.status === 200);
    const refused = responses.filter((r) => r.status === 429);
    const perServer = [0, 1].map((n) => responses.filter((r, i) => i % 2 === n && r.status === 200).length);
    console.log(`two servers, limit 10: ${ok.length} admitted (${perServer.join(' + ')}), ${refused.length} refused (of 30; 15 per server)`);
    expect(ok).toHaveLength(10);
    expect(refused).toHaveLength(20);
    expect(ok.map((r) => Number(r.headers.get('x-ratelimit-remaining-requests'))).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    for (const r of ok) expect(r.headers.get('x-ratelimit-limit-requests')).toBe('10');
    for (const r of refused) {
      expect(r.headers.get('x-ratelimit-limit-requests')).toBe('10');
      expect(r.headers.get('x-ratelimit-remaining-requests')).toBe('0');
      expect(r.headers.get('x-ratelimit-reset-requests')).toMatch(/^\d+(\.\d+)?(ms|s)$|^\dm/);
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      const body = (await r.json()) as { error: { type: string; code: string; message: string; param: unknown } };
      expect(body.error).toMatchObject({ type: 'requests', code: 'rate_limit_exceeded', param: null });
    }
  }, 180_000);

  it('spend recorded through both servers adds up in `hearth usage --json --store redis://…`', async () => {
    const key = await newKey(['--name', 'spender', '--sandbox', '--rate-limit', '1000']);
    const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    let prompt = 0;
    let completion = 0;
    const results = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const res = await fetch(`${servers[i % 2]!.url}/v1/chat/completions`, {
          method: 'POST',
          headers: auth,
          body: JSON.stringify({ model: 'svc/tiny-chat', messages: [{ role: 'user', content: `Hello number ${i}` }], temperature: 0 }),
        });
        expect(res.status).toBe(200);
        return (await res.json()) as { usage: { prompt_tokens: number; completion_tokens: number } };
      }),
    );
    for (const r of results) {
      prompt += r.usage.prompt_tokens;
      completion += r.usage.completion_tokens;
    }
    const usage = JSON.parse(await hearth(['usage', '--json', ...store()])) as Array<Record<string, unknown>>;
    const row = usage.find((u) => u.name === 'spender')!;
    const spend = (prompt * PRICE.input + completion * PRICE.output) / 1e6;
    console.log(`two servers, spend: 12 requests, ${prompt}+${completion} tokens delivered; usage says ${JSON.stringify(row)}`);
    expect(row).toMatchObject({ sandbox: true, requests: 12, prompt_tokens: prompt, completion_tokens: completion });
    expect(row.spend_usd as number).toBeCloseTo(spend, 9);
  }, 180_000);

  it('keys list and revoke work on redis; both servers refuse a revoked key on its next request', async () => {
    const key = await newKey(['--name', 'doomed', '--rate-limit', '1000']);
    const auth = { authorization: `Bearer ${key}` };
    for (const s of servers) expect((await fetch(`${s.url}/v1/models`, { headers: auth })).status).toBe(200);
    const list = JSON.parse(await hearth(['keys', 'list', '--json', ...store()])) as Array<{ id: string; name: string; revoked: boolean }>;
    const row = list.find((k) => k.name === 'doomed')!;
    expect(row.revoked).toBe(false);
    expect(JSON.stringify(list)).not.toContain(key);
    await hearth(['keys', 'revoke', row.id, ...store()]);
    for (const s of servers) {
      const res = await fetch(`${s.url}/v1/models`, { headers: auth });
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('invalid_api_key');
    }
    const after = JSON.parse(await hearth(['keys', 'list', '--json', ...store()])) as Array<{ id: string; revoked: boolean }>;
    expect(after.find((k) => k.id === row.id)!.revoked).toBe(true);
  }, 180_000);
});

describe('the CLI on an unreachable redis', () => {
  it('fails with a message that names the store but never its password', async () => {
    const err = (await hearth(['keys', 'list', '--store', 'redis://admin:hunter2secret@127.0.0.1:1/0']).catch((e: unknown) => e)) as {
      code?: number;
      stderr?: string;
      stdout?: string;
    };
    expect(err.code).not.toBe(0);
    expect(String(err.stderr)).toMatch(/redis:\/\/127\.0\.0\.1:1\/0/);
    expect(String(err.stderr) + String(err.stdout)).not.toContain('hunter2secret');
  });
});
