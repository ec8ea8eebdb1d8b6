// The access layer over a real redis-server that freezes (SIGSTOP) and resumes (SIGCONT):
// calls fail with 503 store_unavailable instead of hanging, a charge for output already
// delivered is kept and lands once redis is back (exactly once, although the timed-out
// command also runs when redis wakes), a reply refused for want of its charge is not
// charged, and admission works again without a restart.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccess, type HearthAccess } from '../../src/access/access.js';
import { openRedisStore, type RedisStore } from '../../src/access/redis-store.js';
import { utcMonth } from '../../src/access/store.js';
import { AccessError } from '../../src/access/types.js';
import { REDIS_MISSING, redisServerBinary, startRedis, type TestRedis } from '../helpers/redis.js';

const haveRedis = redisServerBinary() !== null;
if (!haveRedis) console.warn(REDIS_MISSING);

async function eventually(check: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check().catch(() => false))) {
    if (Date.now() > end) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.skipIf(!haveRedis)('the access layer when redis freezes', () => {
  let redis: TestRedis;
  let access: HearthAccess;
  beforeAll(async () => {
    redis = await startRedis();
    const store = await openRedisStore(redis.url, { prefix: 'outage:', commandTimeoutMs: 500 });
    access = createAccess({ store, sandboxCapUsd: 1 });
  });
  afterAll(async () => {
    redis?.proc.kill('SIGCONT');
    await access?.close();
    await redis?.stop();
  });

  it('refuses with 503 while frozen, keeps a delivered charge, and recovers on resume', async () => {
    const { key } = await access.createKey({ name: 'frozen', sandbox: true });
    const p = await access.authenticate(`Bearer ${key}`);
    const delivered = await access.reserve(p, { model: 'svc/tiny-chat', maxCostUsd: 0.5 });
    const unsent = await access.reserve(p, { model: 'svc/tiny-chat', maxCostUsd: 0.25 });

    redis.proc.kill('SIGSTOP');
    try {
      for (const call of [() => access.authenticate(`Bearer ${key}`), () => access.reserve(p, { model: 'svc/tiny-chat', maxCostUsd: 0.1 })]) {
        const err = await call().catch((e: unknown) => e);
        expect(err).toBeInstanceOf(AccessError);
        expect(err).toMatchObject({ status: 503, type: 'server_error', code: 'store_unavailable' });
        expect(Number((err as AccessError).headers['retry-after'])).toBeGreaterThan(0);
      }
      // Output already delivered: settle does not fail; the charge waits for redis.
      await delivered.settle({ model: 'svc/tiny-chat', prompt_tokens: 10, completion_tokens: 20, cost_usd: 0.125 });
      // A reply not sent yet: settle says the store is away, and the reply is not served.
      const err = await unsent
        .settle({ model: 'svc/tiny-chat', prompt_tokens: 1, completion_tokens: 1, cost_usd: 0.001 }, { beforeReply: true })
        .catch((e: unknown) => e);
      expect(err).toMatchObject({ status: 503, code: 'store_unavailable' });
    } finally {
      redis.proc.kill('SIGCONT');
    }

    // Back without a restart: the delivered charge landed once; the other hold was freed.
    const month = utcMonth(Date.now());
    await eventually(async () => (await access.store.accountMonthTotals(p.accountId, month)).requests >= 1);
    await eventually(async () => {
      const r = await access.store.reserve({ id: 'hold_probe', account_id: p.accountId, amount_usd: 0, expires: Date.now() + 1000 }, 1, month, Date.now());
      await access.store.settle({ id: 'hold_probe', account_id: p.accountId });
      return r.held_usd === 0;
    });
    await new Promise((r) => setTimeout(r, 1000)); // let any resent or retried command arrive
    // The delivered charge landed exactly once. The refused reply's charge timed out but
    // still ran when redis woke; ending its hold uncharged undid it.
    const totals = await access.store.accountMonthTotals(p.accountId, month);
    expect(totals).toMatchObject({ requests: 1, prompt_tokens: 10, completion_tokens: 20, spend_usd: 0.125 });
    const ledger = (await (access.store as RedisStore).ledger(month)).filter((e) => e.account_id === p.accountId);
    expect(ledger.map((e) => e.cost_usd)).toEqual([0.125]);
    const hold = await access.reserve(await access.authenticate(`Bearer ${key}`), { model: 'svc/tiny-chat', maxCostUsd: 0.8 });
    await hold.settle(null);
  }, 60_000);
});
