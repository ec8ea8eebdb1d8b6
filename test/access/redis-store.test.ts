// The redis store: the shared contract against a real redis-server, plus what only a
// networked store has to show: several store instances (as in several servers)
// sharing keys, limits and spend exactly, and the password kept out of messages.

import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccess } from '../../src/access/access.js';
import { openStore } from '../../src/access/open-store.js';
import { openRedisStore, redactRedisUrl, type RedisStore } from '../../src/access/redis-store.js';
import { utcMonth } from '../../src/access/store.js';
import { AccessError } from '../../src/access/types.js';
import { randomBase62 } from '../../src/access/keys.js';
import { REDIS_MISSING, redisServerBinary, startRedis, type TestRedis } from '../helpers/redis.js';
import { describeStoreContract } from './store-contract.js';
import { streamThenKill, tempDir } from './helpers.js';

const haveRedis = redisServerBinary() !== null;
if (!haveRedis) console.warn(REDIS_MISSING);

let redis: TestRedis | undefined;
beforeAll(async () => {
  if (haveRedis) redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

/** A store on the shared test server under its own prefix: a fresh, empty store. */
const fresh = (prefix = `t${randomBase62(8)}:`) => openRedisStore(redis!.url, { prefix });

describe.skipIf(!haveRedis)('redis store', () => {
  describeStoreContract('redis', () => fresh());

  it('two instances (two servers) share keys, revocations, limits and spend exactly', async () => {
    const prefix = `shared${randomBase62(8)}:`;
    const T = Date.UTC(2026, 10, 15, 12);
    const a = createAccess({ store: await fresh(prefix), rateLimit: 10, now: () => T });
    const b = createAccess({ store: await fresh(prefix), rateLimit: 10, now: () => T });
    try {
      const { key, id } = await a.createKey({ name: 'team', sandbox: true });
      const pa = await a.authenticate(`Bearer ${key}`);
      const pb = await b.authenticate(`Bearer ${key}`);
      expect(pb.keyId).toBe(id);
      // 30 admissions split across both: exactly 10 pass.
      const tries = Array.from({ length: 30 }, (_, i) => (i % 2 ? a : b).admit(i % 2 ? pa : pb).then(() => true, () => false));
      expect((await Promise.all(tries)).filter(Boolean)).toHaveLength(10);
      await a.record(pa, { model: 'm', prompt_tokens: 3, completion_tokens: 4, cost_usd: 0.1, request_id: 'req_1' });
      await b.record(pb, { model: 'm', prompt_tokens: 5, completion_tokens: 6, cost_usd: 0.2, request_id: 'req_2' });
      const [u] = await b.usageThisMonth();
      expect(u).toMatchObject({ name: 'team', sandbox: true, requests: 2, prompt_tokens: 8, completion_tokens: 10 });
      expect(u!.spend_usd).toBeCloseTo(0.3, 12);
      const ledger = await (a.store as RedisStore).ledger(utcMonth(T));
      expect(ledger.map((e) => e.request_id)).toEqual(['req_1', 'req_2']);
      // A revocation through one is seen by the other on its next call.
      await a.revokeKey(id);
      const err = await b.authenticate(`Bearer ${key}`).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AccessError);
      expect((err as AccessError).status).toBe(401);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('honours the injected clock: the cap resets at the UTC month boundary', async () => {
    let t = Date.UTC(2026, 10, 30, 23, 59, 59);
    const access = createAccess({ store: await fresh(), sandboxCapUsd: 1, now: () => t });
    try {
      const { key } = await access.createKey({ name: 'sb', sandbox: true });
      const p = await access.authenticate(`Bearer ${key}`);
      await access.record(p, { model: 'm', prompt_tokens: 1, completion_tokens: 1, cost_usd: 1 });
      const err = (await access.checkQuota(p).catch((e: unknown) => e)) as AccessError;
      expect(err.code).toBe('insufficient_quota');
      expect(err.headers['x-should-retry']).toBe('false');
      t = Date.UTC(2026, 11, 1, 0, 0, 0);
      await expect(access.checkQuota(p)).resolves.toBeUndefined();
      expect((await access.usageThisMonth())[0]!.spend_usd).toBe(0);
    } finally {
      await access.close();
    }
  });

  it('a stream’s hold left by a server killed with SIGKILL is charged its last delivery when a server on its machine opens the store', async () => {
    const prefix = `crash${randomBase62(8)}:`;
    const setup = createAccess({ store: await fresh(prefix) });
    const { key } = await setup.createKey({ name: 'streamer', sandbox: true });
    await setup.close();
    await streamThenKill(`openRedisStore(${JSON.stringify(redis!.url)}, { prefix: ${JSON.stringify(prefix)} })`, key);

    const after = createAccess({ store: await fresh(prefix), sandboxCapUsd: 1 });
    try {
      const [u] = await after.usageThisMonth();
      expect(u).toMatchObject({ requests: 1, prompt_tokens: 5, completion_tokens: 40 });
      expect(u!.spend_usd).toBeCloseTo(0.04, 12);
      const ledger = await (after.store as RedisStore).ledger(utcMonth(Date.now()));
      expect(ledger.map((e) => e.completion_tokens)).toEqual([40]);
      // The hold is over: all the rest of the cap is free.
      const p = await after.authenticate(`Bearer ${key}`);
      await (await after.reserve(p, { model: 'svc/tiny-chat', maxCostUsd: 0.96 })).settle(null);
      // A second sweep charges nothing more.
      expect(await after.store.settleOrphans(Date.now() + 3_600_000)).toBe(0);
    } finally {
      await after.close();
    }
  });

  it('keeps the item index in step with the responses: nothing of it is left once they are deleted or pruned', async () => {
    const prefix = `items${randomBase62(8)}:`;
    const store = await fresh(prefix);
    const raw = new Redis(redis!.url);
    try {
      const response = (id: string, created: number, items: string[], account_id = 'acct_a') => ({
        id,
        account_id,
        created,
        response: { id, object: 'response', output: [{ id: `msg_${id}`, type: 'message', role: 'assistant', content: [] }] },
        input_items: items.map((i) => ({ id: i, type: 'message', role: 'user', content: 'Hi' })),
      });
      await store.putResponse(response('resp_1', 1000, ['msg_a']));
      await store.putResponse(response('resp_2', 2000, ['msg_a', 'msg_resp_1']));
      await store.putResponse(response('resp_3', 3000, ['msg_c'], 'acct_b'));
      expect(await raw.zrange(`${prefix}ritem:acct_a:msg_a`, '0', '-1')).toEqual(['resp_1', 'resp_2']);
      expect((await raw.smembers(`${prefix}respitems:acct_a:resp_2`)).sort()).toEqual(['msg_a', 'msg_resp_1', 'msg_resp_2']);
      expect(await store.deleteResponse('resp_2', 'acct_a')).toBe(true);
      expect(await raw.zrange(`${prefix}ritem:acct_a:msg_a`, '0', '-1')).toEqual(['resp_1']);
      expect(await store.pruneResponses({ accountId: 'acct_a', keep: 1 })).toBe(0);
      expect(await store.pruneResponses({ before: 2500 })).toBe(1);
      expect(await store.pruneResponses({ accountId: 'acct_b', before: 4000 })).toBe(1);
      const left = (await raw.keys(`${prefix}*`)).filter((k) => /:(ritem|respitems|resp):/.test(k));
      expect(left).toEqual([]);
    } finally {
      raw.disconnect();
      await store.close();
    }
  });

  it('openStore("redis://…") opens it; the URL is shown without its password', async () => {
    const s = await openStore(redis!.url.replace('redis://', 'redis://:@') + '/0', tempDir());
    expect(s.kind).toBe('redis');
    await s.close();
    expect(redactRedisUrl('redis://user:s3cret@h:6379/2')).toBe('redis://h:6379/2');
    const err = await openRedisStore(`redis://:s3cret@127.0.0.1:${redis!.port}/0`).catch((e: Error) => e);
    // The test server has no password: AUTH fails, and the message must not echo it.
    if (err instanceof Error) expect(err.message).not.toContain('s3cret');
    else await err.close();
  });
});
