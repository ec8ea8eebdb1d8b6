// The contract every AccessStore passes. A new store (redis) joins by calling
// describeStoreContract('redis', () => openRedisStore(...)).

import { afterEach, describe, expect, it } from 'vitest';
import type { AccessStore, AccountRow, KeyRow, StoredResponse, UsageEntry } from '../../src/access/store.js';
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

    const hold = (id: string, amount_usd: number, expires = T0 + 60_000) => ({ id, account_id: 'acct_a', amount_usd, expires });
    const NOV = utcMonth(T0);

    it('reserve: holds what fits under the cap with spend and other holds, refuses the rest', async () => {
      const s = await fresh();
      await s.appendUsage(usage({ cost_usd: 1 }));
      expect(await s.reserve(hold('hold_1', 2), 5, NOV, T0)).toEqual({ ok: true, spent_usd: 1, held_usd: 0 });
      expect(await s.reserve(hold('hold_2', 2.5), 5, NOV, T0)).toEqual({ ok: false, spent_usd: 1, held_usd: 2 });
      expect((await s.reserve(hold('hold_3', 2), 5, NOV, T0)).ok).toBe(true); // exactly at the cap
      // Another account has its own cap; another month starts with no spend.
      expect((await s.reserve({ ...hold('hold_4', 5), account_id: 'acct_b' }, 5, NOV, T0)).ok).toBe(true);
      expect((await s.reserve(hold('hold_5', 1.5), 5, '2026-12', T0)).ok).toBe(false); // the holds still count
      // Holding the same id again changes nothing (a resent command).
      expect((await s.reserve(hold('hold_1', 2), 5, NOV, T0)).ok).toBe(true);
      expect((await s.reserve(hold('hold_6', 0.01), 5, NOV, T0)).ok).toBe(false);
    });

    it('reserve: exact under concurrency', async () => {
      const s = await fresh();
      const results = await Promise.all(Array.from({ length: 30 }, (_, i) => s.reserve(hold(`hold_${i}`, 0.1), 1.05, NOV, T0)));
      expect(results.filter((r) => r.ok)).toHaveLength(10);
    });

    it('settle: charges the real cost and frees the hold, once per hold id', async () => {
      const s = await fresh();
      expect((await s.reserve(hold('hold_1', 4), 5, NOV, T0)).ok).toBe(true);
      expect((await s.reserve(hold('hold_2', 2), 5, NOV, T0)).ok).toBe(false);
      await s.settle({ id: 'hold_1', account_id: 'acct_a' }, usage({ cost_usd: 0.25, request_id: 'req_1' }));
      await s.settle({ id: 'hold_1', account_id: 'acct_a' }, usage({ cost_usd: 0.25, request_id: 'req_1' })); // a retry
      expect(await s.accountMonthTotals('acct_a', NOV)).toMatchObject({ requests: 1, spend_usd: 0.25 });
      expect(await s.reserve(hold('hold_2', 4.75), 5, NOV, T0)).toEqual({ ok: true, spent_usd: 0.25, held_usd: 0 });
      // Settling with nothing to charge frees the hold only.
      await s.settle({ id: 'hold_2', account_id: 'acct_a' });
      expect(await s.accountMonthTotals('acct_a', NOV)).toMatchObject({ requests: 1, spend_usd: 0.25 });
      expect((await s.reserve(hold('hold_3', 4.75), 5, NOV, T0)).ok).toBe(true);
      // A settled hold cannot be taken again; a charge without a hold (expired, or none) still lands.
      expect((await s.reserve(hold('hold_1', 0), 5, NOV, T0)).ok).toBe(false);
      await s.settle({ id: 'hold_gone', account_id: 'acct_a' }, usage({ cost_usd: 0.5 }));
      expect((await s.accountMonthTotals('acct_a', NOV)).spend_usd).toBe(0.75);
      await expect(s.settle({ id: 'hold_4', account_id: 'acct_a' }, usage({ cost_usd: -1 }))).rejects.toThrow();
    });

    it('settle without a charge undoes one already settled under that id, and refuses later ones', async () => {
      const s = await fresh();
      await s.appendUsage(usage({ cost_usd: 1 }));
      expect((await s.reserve(hold('hold_1', 2), 5, NOV, T0)).ok).toBe(true);
      await s.settle({ id: 'hold_1', account_id: 'acct_a' }, usage({ cost_usd: 0.5, request_id: 'req_refused' }));
      expect(await s.accountMonthTotals('acct_a', NOV)).toMatchObject({ requests: 2, spend_usd: 1.5 });
      await s.settle({ id: 'hold_1', account_id: 'acct_a' });
      await s.settle({ id: 'hold_1', account_id: 'acct_a' });
      await s.settle({ id: 'hold_1', account_id: 'acct_a' }, usage({ cost_usd: 0.5 }));
      expect(await s.accountMonthTotals('acct_a', NOV)).toEqual({ account_id: 'acct_a', requests: 1, prompt_tokens: 10, completion_tokens: 5, spend_usd: 1 });
    });

    it('reserve: expired holds stop counting', async () => {
      const s = await fresh();
      expect((await s.reserve(hold('hold_1', 5, T0 + 1000), 5, NOV, T0)).ok).toBe(true);
      expect((await s.reserve(hold('hold_2', 1, T0 + 5000), 5, NOV, T0 + 999)).ok).toBe(false);
      expect(await s.reserve(hold('hold_2', 1, T0 + 5000), 5, NOV, T0 + 1000)).toEqual({ ok: true, spent_usd: 0, held_usd: 0 });
    });

    it('renewReservation: extends the lease and lowers (never raises) the amount', async () => {
      const s = await fresh();
      expect((await s.reserve(hold('hold_1', 4, T0 + 1000), 5, NOV, T0)).ok).toBe(true);
      expect(await s.renewReservation('hold_1', 'acct_a', 3, T0 + 10_000)).toBe(true);
      expect(await s.renewReservation('hold_1', 'acct_a', 4.5, T0 + 10_000)).toBe(true);
      expect(await s.reserve(hold('hold_2', 2, T0 + 20_000), 5, NOV, T0 + 5000)).toEqual({ ok: true, spent_usd: 0, held_usd: 3 });
      expect(await s.renewReservation('hold_none', 'acct_a', 1, T0 + 10_000)).toBe(false);
      await s.settle({ id: 'hold_1', account_id: 'acct_a' });
      expect(await s.renewReservation('hold_1', 'acct_a', 1, T0 + 10_000)).toBe(false);
    });

    // Leases in the real future: a file store opened again settles what has run out by the real clock.
    const LEASE_END = Date.now() + 3_600_000;
    const delivery = (id: string, over: Partial<UsageEntry>, expires = LEASE_END) => ({ id, account_id: 'acct_a', entry: usage(over), expires });

    it('settleOrphans charges a hold its last delivery once its lease ran out, and the hold settles only once', async () => {
      const s = await fresh();
      expect((await s.reserve(hold('hold_1', 4, LEASE_END), 5, NOV, T0)).ok).toBe(true);
      await s.recordDelivery(delivery('hold_1', { completion_tokens: 3, cost_usd: 0.1 }, LEASE_END - 1000));
      await s.recordDelivery(delivery('hold_1', { completion_tokens: 7, cost_usd: 0.2, request_id: 'req_cut' }));
      expect(await s.settleOrphans(LEASE_END - 1)).toBe(0);
      expect((await s.accountMonthTotals('acct_a', NOV)).requests).toBe(0);
      expect(await s.settleOrphans(LEASE_END)).toBe(1);
      expect(await s.accountMonthTotals('acct_a', NOV)).toEqual({ account_id: 'acct_a', requests: 1, prompt_tokens: 10, completion_tokens: 7, spend_usd: 0.2 });
      // The holder, back after all, settles: nothing more is charged; the hold is gone.
      await s.settle({ id: 'hold_1', account_id: 'acct_a' }, usage({ completion_tokens: 9, cost_usd: 0.3 }));
      expect(await s.settleOrphans(LEASE_END + 10_000)).toBe(0);
      expect((await s.accountMonthTotals('acct_a', NOV)).spend_usd).toBe(0.2);
      expect(await s.reserve(hold('hold_2', 4.8, LEASE_END), 5, NOV, T0)).toEqual({ ok: true, spent_usd: 0.2, held_usd: 0 });
    });

    it('a settled hold keeps no delivery: a late one is ignored, and nothing is left for a sweep', async () => {
      const s = await fresh();
      // Holds of accounts without a cap are not reserved; their streams still record deliveries.
      await s.recordDelivery(delivery('hold_free', { completion_tokens: 32, cost_usd: 0.1 }));
      await s.settle({ id: 'hold_free', account_id: 'acct_a' }, usage({ completion_tokens: 40, cost_usd: 0.125 }));
      await s.recordDelivery(delivery('hold_free', { completion_tokens: 40, cost_usd: 0.125 })); // a write that was in flight
      await s.recordDelivery(delivery('hold_cut', { completion_tokens: 5, cost_usd: 0.5 }));
      await s.settle({ id: 'hold_cut', account_id: 'acct_a' }); // ended uncharged (nothing reached the client)
      expect(await s.settleOrphans(LEASE_END + 10_000)).toBe(0);
      expect(await s.accountMonthTotals('acct_a', NOV)).toEqual({ account_id: 'acct_a', requests: 1, prompt_tokens: 10, completion_tokens: 40, spend_usd: 0.125 });
    });

    const stored = (id: string, over: Partial<StoredResponse> = {}): StoredResponse => ({
      id,
      account_id: 'acct_a',
      created: T0,
      response: { id, object: 'response', status: 'completed', output: [{ type: 'message', id: `msg_${id}`, content: [{ type: 'output_text', text: 'Hi ✓' }] }] },
      input_items: [{ id: `msg_in_${id}`, type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hello' }] }],
      ...over,
    });

    it('stored responses: reads one back whole for its account, and for no other', async () => {
      const s = await fresh();
      await s.putResponse(stored('resp_1'));
      await s.putResponse(stored('resp_2', { account_id: 'acct_b' }));
      expect(await s.getResponse('resp_1', 'acct_a')).toEqual(stored('resp_1'));
      expect(await s.getResponse('resp_1', 'acct_b')).toBeUndefined();
      expect(await s.getResponse('resp_2', 'acct_a')).toBeUndefined();
      expect(await s.getResponse('resp_none', 'acct_a')).toBeUndefined();
      expect(await s.getResponse('../acct_b/resp_2', 'acct_a')).toBeUndefined();
      const copy = (await s.getResponse('resp_1', 'acct_a'))!;
      copy.input_items.push({ changed: true });
      expect((await s.getResponse('resp_1', 'acct_a'))!.input_items).toHaveLength(1);
      await expect(s.putResponse(stored('../escape'))).rejects.toThrow();
    });

    it('stored responses: a delete answers true once, and only for the owner', async () => {
      const s = await fresh();
      await s.putResponse(stored('resp_1'));
      expect(await s.deleteResponse('resp_1', 'acct_b')).toBe(false);
      expect(await s.getResponse('resp_1', 'acct_a')).toBeDefined();
      expect(await s.deleteResponse('resp_1', 'acct_a')).toBe(true);
      expect(await s.deleteResponse('resp_1', 'acct_a')).toBe(false);
      expect(await s.getResponse('resp_1', 'acct_a')).toBeUndefined();
    });

    it('stored responses: retention deletes those older than its age and, per account, the oldest past its count', async () => {
      const s = await fresh();
      for (let i = 1; i <= 5; i++) await s.putResponse(stored(`resp_a${i}`, { created: T0 + i * 1000 }));
      for (let i = 1; i <= 3; i++) await s.putResponse(stored(`resp_b${i}`, { account_id: 'acct_b', created: T0 + i * 1000 }));
      const left = async (acct: string, prefix: string, n: number) => {
        const out: string[] = [];
        for (let i = 1; i <= n; i++) if (await s.getResponse(`${prefix}${i}`, acct)) out.push(`${prefix}${i}`);
        return out;
      };
      expect(await s.pruneResponses({ accountId: 'acct_a', keep: 3 })).toBe(2);
      expect(await left('acct_a', 'resp_a', 5)).toEqual(['resp_a3', 'resp_a4', 'resp_a5']);
      expect(await left('acct_b', 'resp_b', 3)).toEqual(['resp_b1', 'resp_b2', 'resp_b3']);
      // By age, every account's: created before T0 + 3.5 s.
      expect(await s.pruneResponses({ before: T0 + 3500 })).toBe(4);
      expect(await left('acct_a', 'resp_a', 5)).toEqual(['resp_a4', 'resp_a5']);
      expect(await left('acct_b', 'resp_b', 3)).toEqual([]);
      expect(await s.pruneResponses({ accountId: 'acct_a', keep: 2 })).toBe(0);
      expect(await s.pruneResponses({ accountId: 'acct_a', before: T0 + 4500, keep: 5 })).toBe(1);
      expect(await left('acct_a', 'resp_a', 5)).toEqual(['resp_a5']);
    });

    it('stored responses: an item is found by its id, for its account only, from the newest response holding it', async () => {
      const s = await fresh();
      const call = { id: 'fc_1', type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' };
      const first = stored('resp_1', { response: { id: 'resp_1', object: 'response', output: [call] } });
      await s.putResponse(first);
      await s.putResponse(stored('resp_b', { account_id: 'acct_b' }));
      expect(await s.getResponseItem('fc_1', 'acct_a')).toEqual({ item: call, response_id: 'resp_1', created: T0 });
      expect(await s.getResponseItem('msg_in_resp_1', 'acct_a')).toEqual({ item: first.input_items[0], response_id: 'resp_1', created: T0 });
      // Another account's item, an unknown id, an id no store could hold: not found alike.
      expect(await s.getResponseItem('fc_1', 'acct_b')).toBeUndefined();
      expect(await s.getResponseItem('msg_in_resp_b', 'acct_a')).toBeUndefined();
      expect(await s.getResponseItem('msg_none', 'acct_a')).toBeUndefined();
      expect(await s.getResponseItem('../acct_b/msg_in_resp_b', 'acct_a')).toBeUndefined();
      expect((await s.getResponseItem('msg_in_resp_b', 'acct_b'))?.response_id).toBe('resp_b');
      // A response continuing the first holds its items too (its input items), and is newer.
      const output = { id: 'fco_1', type: 'function_call_output', call_id: 'call_1', output: 'Sunny', status: 'completed' };
      await s.putResponse(stored('resp_2', { created: T0 + 1000, input_items: [...first.input_items, call, output] }));
      expect(await s.getResponseItem('fc_1', 'acct_a')).toEqual({ item: call, response_id: 'resp_2', created: T0 + 1000 });
      expect((await s.getResponseItem('fco_1', 'acct_a'))?.item).toEqual(output);
      // A copy: changing it changes nothing stored.
      (await s.getResponseItem('fc_1', 'acct_a'))!.item.name = 'changed';
      expect((await s.getResponseItem('fc_1', 'acct_a'))!.item.name).toBe('get_weather');
    });

    it('stored responses: an item goes from the index with the last response holding it (delete, replace, retention)', async () => {
      const s = await fresh();
      const call = { id: 'fc_1', type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{}', status: 'completed' };
      const first = stored('resp_1', { response: { id: 'resp_1', object: 'response', output: [call] } });
      await s.putResponse(first);
      await s.putResponse(stored('resp_2', { created: T0 + 1000, input_items: [...first.input_items, call] }));
      expect(await s.deleteResponse('resp_2', 'acct_b')).toBe(false);
      expect((await s.getResponseItem('fc_1', 'acct_a'))?.response_id).toBe('resp_2');
      expect(await s.deleteResponse('resp_2', 'acct_a')).toBe(true);
      // Still held by the first.
      expect(await s.getResponseItem('fc_1', 'acct_a')).toEqual({ item: call, response_id: 'resp_1', created: T0 });
      expect(await s.getResponseItem('msg_resp_2', 'acct_a')).toBeUndefined();
      // Replaced by a response under the same id that holds other items.
      await s.putResponse(stored('resp_1'));
      expect(await s.getResponseItem('fc_1', 'acct_a')).toBeUndefined();
      expect((await s.getResponseItem('msg_resp_1', 'acct_a'))?.response_id).toBe('resp_1');
      expect(await s.deleteResponse('resp_1', 'acct_a')).toBe(true);
      expect(await s.getResponseItem('msg_resp_1', 'acct_a')).toBeUndefined();
      expect(await s.getResponseItem('msg_in_resp_1', 'acct_a')).toBeUndefined();
      // Retention: by count for one account, by age for every account.
      for (let i = 1; i <= 3; i++) await s.putResponse(stored(`resp_a${i}`, { created: T0 + i * 1000 }));
      await s.putResponse(stored('resp_b1', { account_id: 'acct_b', created: T0 + 1000 }));
      expect(await s.pruneResponses({ accountId: 'acct_a', keep: 2 })).toBe(1);
      expect(await s.getResponseItem('msg_resp_a1', 'acct_a')).toBeUndefined();
      expect((await s.getResponseItem('msg_resp_a2', 'acct_a'))?.response_id).toBe('resp_a2');
      expect(await s.pruneResponses({ before: T0 + 2500 })).toBe(2);
      expect(await s.getResponseItem('msg_resp_a2', 'acct_a')).toBeUndefined();
      expect(await s.getResponseItem('msg_in_resp_b1', 'acct_b')).toBeUndefined();
      expect((await s.getResponseItem('msg_in_resp_a3', 'acct_a'))?.response_id).toBe('resp_a3');
    });

    it('refuses use after close', async () => {
      const s = await makeStore();
      await s.close();
      await expect(s.listKeys()).rejects.toThrow();
    });
  });
}
