// The contract every AccessStore passes. A new store (redis) joins by calling
// describeStoreContract('redis', () => openRedisStore(...)).

import { afterEach, describe, expect, it } from 'vitest';
import type { AccessStore, AccountRow, KeyRow, UsageEntry } from '../../src/access/store.js';
import { utcMonth } from '../../src/access/store.js';

const hex = (c: string) => c.repeat(64);
const T0 = Date.UTC(2026, 10, 15, 12, 0, 0);

export function describeStoreContract(name: string, makeStore: () => Promise<AccessStore> | AccessStore): void {
  describe(`AccessStore contract: ${name}`, () => {
    const open: AccessStore[] = [];
    afterEach(async () => {
      for (const s of open.splice(0)) await s.close();
    });
    async function fresh(): Promise<AccessStore> {
      const s = await makeStore();
      open.push(s);
      return s;
    }
    const account = (id = 'acct_a', over: Partial<AccountRow> = {}): AccountRow => ({ id, name: 'alice', sandbox: false, created: T0, ...over });
    const key = (id = 'key_a', over: Partial<KeyRow> = {}): KeyRow => ({ id, account_id: 'acct_a', hash: hex('a'), name: 'k', admin: false, created: T0, ...over });
    const usage = (over: Partial<UsageEntry> = {}): UsageEntry => ({
      ts: T0,
      account_id: 'acct_a',
      key_id: 'key_a',
      model: 'svc/tiny-chat',
      prompt_tokens: 10,
      completion_tokens: 5,
      cost_usd: 0.25,
      ...over,
    });

    it('creates, reads and lists accounts; refuses a duplicate id', async () => {
      const s = await fresh();
      await s.createAccount(account());
      await s.createAccount(account('acct_b', { name: 'bob', sandbox: true }));
      expect(await s.getAccount('acct_a')).toEqual(account());
      expect(await s.getAccount('acct_zz')).toBeUndefined();
      expect((await s.listAccounts()).map((a) => a.id).sort()).toEqual(['acct_a', 'acct_b']);
      await expect(s.createAccount(account())).rejects.toThrow();
    });

    it('creates keys, finds them by hash and id, refuses duplicates and orphans', async () => {
      const s = await fresh();
      await s.createAccount(account());
      await s.createKey(key('key_a', { rate_limit: 7 }));
      expect(await s.findKeyByHash(hex('a'))).toEqual(key('key_a', { rate_limit: 7 }));
      expect(await s.getKey('key_a')).toEqual(key('key_a', { rate_limit: 7 }));
      expect(await s.findKeyByHash(hex('b'))).toBeUndefined();
      expect(await s.getKey('key_b')).toBeUndefined();
      await expect(s.createKey(key('key_a', { hash: hex('c') }))).rejects.toThrow();
      await expect(s.createKey(key('key_b'))).rejects.toThrow(); // same hash
      await expect(s.createKey(key('key_c', { hash: hex('c'), account_id: 'acct_none' }))).rejects.toThrow();
      expect(await s.listKeys()).toHaveLength(1);
    });

    it('lists keys in creation order', async () => {
      const s = await fresh();
      await s.createAccount(account());
      const ids = ['key_m', 'key_b', 'key_z', 'key_a'];
      for (const [i, id] of ids.entries()) await s.createKey(key(id, { hash: hex('0123456789abcdef'[i]!) }));
      expect((await s.listKeys()).map((k) => k.id)).toEqual(ids);
    });

    it('returns copies: changing a returned row changes nothing stored', async () => {
      const s = await fresh();
      await s.createAccount(account());
      await s.createKey(key());
      const k = (await s.getKey('key_a'))!;
      k.admin = true;
      expect((await s.getKey('key_a'))!.admin).toBe(false);
    });

    it('revokes idempotently, keeping the first time', async () => {
      const s = await fresh();
      await s.createAccount(account());
      await s.createKey(key());
      expect((await s.revokeKey('key_a', T0 + 5))!.revoked_at).toBe(T0 + 5);
      expect((await s.revokeKey('key_a', T0 + 9))!.revoked_at).toBe(T0 + 5);
      expect((await s.findKeyByHash(hex('a')))!.revoked_at).toBe(T0 + 5);
      expect(await s.revokeKey('key_nope', T0)).toBeUndefined();
    });

    it('totals usage per account per UTC month', async () => {
      const s = await fresh();
      await s.createAccount(account());
      await s.appendUsage(usage());
      await s.appendUsage(usage({ prompt_tokens: 1, completion_tokens: 2, cost_usd: 0.5 }));
      await s.appendUsage(usage({ account_id: 'acct_b', key_id: 'key_b' }));
      // 2026-11-30T23:59:59.999Z is November; a millisecond later is December.
      await s.appendUsage(usage({ ts: Date.UTC(2026, 10, 30, 23, 59, 59, 999), cost_usd: 1 }));
      await s.appendUsage(usage({ ts: Date.UTC(2026, 11, 1), cost_usd: 100 }));
      const nov = await s.accountMonthTotals('acct_a', '2026-11');
      expect(nov).toEqual({ account_id: 'acct_a', requests: 3, prompt_tokens: 21, completion_tokens: 12, spend_usd: 1.75 });
      expect((await s.accountMonthTotals('acct_a', '2026-12')).spend_usd).toBe(100);
      expect(await s.accountMonthTotals('acct_a', '2027-01')).toEqual({
        account_id: 'acct_a',
        requests: 0,
        prompt_tokens: 0,
        completion_tokens: 0,
        spend_usd: 0,
      });
      const all = (await s.monthTotals(utcMonth(T0))).sort((a, b) => a.account_id.localeCompare(b.account_id));
      expect(all.map((t) => [t.account_id, t.requests])).toEqual([
        ['acct_a', 3],
        ['acct_b', 1],
      ]);
      await expect(s.appendUsage(usage({ cost_usd: Number.NaN }))).rejects.toThrow();
      await expect(s.appendUsage(usage({ prompt_tokens: -1 }))).rejects.toThrow();
    });

    it('takeSlot: a sliding window, exact under concurrency', async () => {
      const s = await fresh();
      const results = await Promise.all(Array.from({ length: 100 }, () => s.takeSlot('key_a', 60, 60_000, T0)));
      expect(results.filter((r) => r.allowed)).toHaveLength(60);
      expect(results.filter((r) => r.allowed).map((r) => r.remaining).sort((a, b) => a - b)).toEqual(
        Array.from({ length: 60 }, (_, i) => i),
      );
      const refused = results.find((r) => !r.allowed)!;
      expect(refused).toEqual({ allowed: false, limit: 60, remaining: 0, resetMs: 60_000 });
      // Other keys have their own window.
      expect((await s.takeSlot('key_b', 60, 60_000, T0)).allowed).toBe(true);
      // Still full just before the first requests leave the window, free once they have.
      expect((await s.takeSlot('key_a', 60, 60_000, T0 + 59_999)).allowed).toBe(false);
      const later = await s.takeSlot('key_a', 60, 60_000, T0 + 60_000);
      expect(later.allowed).toBe(true);
      expect(later.remaining).toBe(59);
    });

    it('takeSlot: reset is the time until the oldest request leaves the window', async () => {
      const s = await fresh();
      expect(await s.takeSlot('k', 2, 60_000, T0)).toEqual({ allowed: true, limit: 2, remaining: 1, resetMs: 60_000 });
      expect(await s.takeSlot('k', 2, 60_000, T0 + 20_000)).toEqual({ allowed: true, limit: 2, remaining: 0, resetMs: 40_000 });
      expect(await s.takeSlot('k', 2, 60_000, T0 + 30_000)).toEqual({ allowed: false, limit: 2, remaining: 0, resetMs: 30_000 });
      expect(await s.takeSlot('k', 2, 60_000, T0 + 60_000)).toEqual({ allowed: true, limit: 2, remaining: 0, resetMs: 20_000 });
    });

    it('refuses use after close', async () => {
      const s = await makeStore();
      await s.close();
      await expect(s.listKeys()).rejects.toThrow();
    });
  });
}
