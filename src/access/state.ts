// The in-process state shared by the memory and file stores: tables, monthly
// usage totals, and sliding rate windows. The file store rebuilds it by replaying
// its log through apply(); the memory store calls the same methods directly.

import type { AccountRow, Delivery, KeyRow, Reservation, ReserveResult, SlotResult, UsageEntry, UsageTotals } from './store.js';
import { constantTimeEqual } from './keys.js';
import { utcMonth } from './store.js';

/** One line of the file store's log (and one mutation of the state). */
export type LogRecord =
  | { t: 'header'; format: 'hearth-access'; version: number; created: number }
  | ({ t: 'account' } & AccountRow)
  | ({ t: 'key' } & KeyRow)
  | { t: 'revoke'; id: string; at: number }
  | ({ t: 'usage' } & UsageEntry & { hold?: string })
  | ({ t: 'reserve' } & Reservation)
  | { t: 'renew'; id: string; amount_usd: number; expires: number }
  | { t: 'release'; id: string; ts: number }
  | DeliverRecord;

/** Who holds a hold: where a store can tell whether that process still lives. */
export type HolderProcess = Pick<Reservation, 'pid' | 'host' | 'proc'>;

/** A stream's delivery so far. The hold's first line carries the whole charge and its
 * holder; each later one only the fields that changed (the token counts, cost and time),
 * which keeps a long stream's trail of lines short. */
export type DeliverRecord = { t: 'deliver'; id: string; expires: number } & Partial<UsageEntry> & HolderProcess;

/** A hold's delivery as the state keeps it. */
export type DeliveryRow = Delivery & HolderProcess;

/** How many settled hold ids are remembered (the latest), so that settling one again
 * (a retry whose first try did land) charges nothing. */
const SETTLED_MEMORY = 10_000;

/** Money compared with this much slack: sums of float prices are not exact. */
export const USD_EPSILON = 1e-12;

const zero = (account_id: string): UsageTotals => ({
  account_id,
  requests: 0,
  prompt_tokens: 0,
  completion_tokens: 0,
  spend_usd: 0,
});

export class AccessState {
  readonly accounts = new Map<string, AccountRow>();
  readonly keys = new Map<string, KeyRow>();
  private readonly byHash = new Map<string, KeyRow>();
  /** month → account id → totals */
  private readonly months = new Map<string, Map<string, UsageTotals>>();
  /** key id → times (ms) of the requests counted in its current window, oldest first */
  private readonly windows = new Map<string, number[]>();
  private sweepAt = 0;
  /** Holds of requests in flight, by id. */
  readonly reservations = new Map<string, Reservation>();
  /** Settled hold ids, oldest first, with the charge each settled to (null: none). */
  private readonly settled = new Map<string, UsageEntry | null>();
  /** What the streams of holds not yet settled have delivered, by hold id. */
  readonly deliveries = new Map<string, DeliveryRow>();

  // ---- checks (throw before anything is written) ----
  checkAccount(a: AccountRow): void {
    if (!a.id || typeof a.name !== 'string') throw new Error('account needs an id and a name');
    if (this.accounts.has(a.id)) throw new Error(`account ${a.id} already exists`);
  }

  checkKey(k: KeyRow): void {
    if (!k.id || !/^[0-9a-f]{64}$/.test(k.hash)) throw new Error('key needs an id and a SHA-256 hex hash');
    if (this.keys.has(k.id)) throw new Error(`key ${k.id} already exists`);
    if (this.byHash.has(k.hash)) throw new Error('a key with this hash already exists');
    if (!this.accounts.has(k.account_id)) throw new Error(`account ${k.account_id} does not exist`);
  }

  // ---- mutations ----
  apply(r: LogRecord): void {
    switch (r.t) {
      case 'header':
        return;
      case 'account': {
        const { t: _t, ...row } = r;
        this.accounts.set(row.id, row);
        return;
      }
      case 'key': {
        const { t: _t, ...row } = r;
        this.keys.set(row.id, row);
        this.byHash.set(row.hash, row);
        return;
      }
      case 'revoke': {
        const k = this.keys.get(r.id);
        if (k && k.revoked_at === undefined) k.revoked_at = r.at;
        return;
      }
      case 'usage': {
        const { t: _t, hold, ...e } = r;
        if (hold !== undefined) {
          if (this.settled.has(hold)) return;
          this.endHold(hold, e);
        }
        this.addUsage(e);
        return;
      }
      case 'reserve': {
        const { t: _t, ...res } = r;
        if (!this.settled.has(res.id)) this.reservations.set(res.id, res);
        return;
      }
      case 'renew': {
        const res = this.reservations.get(r.id);
        if (res) {
          res.expires = r.expires;
          res.amount_usd = Math.min(res.amount_usd, r.amount_usd);
        }
        return;
      }
      case 'deliver': {
        if (this.settled.has(r.id)) return;
        const { t: _t, id, expires, pid, host, proc, ...fields } = r;
        const prev = this.deliveries.get(id);
        const entry = { ...prev?.entry, ...fields } as UsageEntry;
        if (!entry.account_id) return; // a later line whose first was lost: nothing to charge to
        this.deliveries.set(id, { id, account_id: entry.account_id, entry, expires, pid: pid ?? prev?.pid, host: host ?? prev?.host, proc: proc ?? prev?.proc });
        return;
      }
      case 'release': {
        // A release after a charge undoes it (the reply it paid for was never sent).
        const charged = this.settled.get(r.id);
        if (charged) this.addUsage(charged, -1);
        this.endHold(r.id, null);
        return;
      }
    }
  }

  private endHold(id: string, charge: UsageEntry | null): void {
    this.reservations.delete(id);
    this.deliveries.delete(id);
    this.settled.delete(id);
    this.settled.set(id, charge);
    if (this.settled.size > SETTLED_MEMORY) this.settled.delete(this.settled.keys().next().value!);
  }

  /** The line that records `d` after what is kept for its hold: all of it the first time,
   * then what changed. */
  deliverRecord(d: Delivery, holder: HolderProcess): DeliverRecord {
    const prev = this.deliveries.get(d.id);
    if (!prev) return { t: 'deliver', id: d.id, expires: d.expires, ...d.entry, ...holder };
    const changed: Partial<UsageEntry> = {};
    for (const [k, v] of Object.entries(d.entry) as [keyof UsageEntry, never][]) if (prev.entry[k] !== v) changed[k] = v;
    return { t: 'deliver', id: d.id, expires: d.expires, ...changed };
  }

  /** The charge a hold settled to, if it did. */
  chargeOf(id: string): UsageEntry | null | undefined {
    return this.settled.get(id);
  }


  /** What the account's unexpired holds add up to at `now`; expired ones are dropped. */
  heldUsd(accountId: string, now: number): number {
    let held = 0;
    for (const [id, r] of this.reservations) {
      if (r.expires <= now) this.reservations.delete(id);
      else if (r.account_id === accountId) held += r.amount_usd;
    }
    return held;
  }

  /** The cap check of reserve (the caller commits the hold when ok). */
  checkReserve(r: Reservation, capUsd: number, month: string, now: number): ReserveResult {
    const spent = this.accountMonthTotals(r.account_id, month).spend_usd;
    const held = this.heldUsd(r.account_id, now);
    return { ok: spent + held + r.amount_usd <= capUsd + USD_EPSILON, spent_usd: spent, held_usd: held };
  }

  private addUsage(e: UsageEntry, sign = 1): void {
    const month = utcMonth(e.ts);
    let m = this.months.get(month);
    if (!m) this.months.set(month, (m = new Map()));
    let tot = m.get(e.account_id);
    if (!tot) m.set(e.account_id, (tot = zero(e.account_id)));
    tot.requests += sign;
    tot.prompt_tokens += sign * e.prompt_tokens;
    tot.completion_tokens += sign * e.completion_tokens;
    tot.spend_usd += sign * e.cost_usd;
  }

  // ---- queries ----
  findKeyByHash(hash: string): KeyRow | undefined {
    const k = this.byHash.get(hash);
    // The map lookup is on a SHA-256 digest, which an attacker cannot steer; the final
    // comparison is constant-time all the same.
    return k && constantTimeEqual(k.hash, hash) ? { ...k } : undefined;
  }

  monthTotals(month: string): UsageTotals[] {
    return [...(this.months.get(month)?.values() ?? [])].map((t) => ({ ...t }));
  }

  accountMonthTotals(accountId: string, month: string): UsageTotals {
    const t = this.months.get(month)?.get(accountId);
    return t ? { ...t } : zero(accountId);
  }

  /** Synchronous check-and-count: no await between them, so exact within a process. */
  takeSlot(keyId: string, limit: number, windowMs: number, now: number): SlotResult {
    this.sweep(now, windowMs);
    let w = this.windows.get(keyId);
    if (!w) this.windows.set(keyId, (w = []));
    const edge = now - windowMs;
    let drop = 0;
    while (drop < w.length && w[drop]! <= edge) drop++;
    if (drop) w.splice(0, drop);
    // A lowered per-key limit leaves extra entries; keep only what the limit needs.
    if (w.length > limit) w.splice(0, w.length - limit);
    if (w.length < limit) {
      w.push(now);
      return { allowed: true, limit, remaining: limit - w.length, resetMs: Math.max(0, w[0]! + windowMs - now) };
    }
    return { allowed: false, limit, remaining: 0, resetMs: Math.max(1, (w[0] ?? now) + windowMs - now) };
  }

  /** Drops windows of keys idle for a whole window, at most once per window. */
  private sweep(now: number, windowMs: number): void {
    if (now < this.sweepAt) return;
    this.sweepAt = now + windowMs;
    for (const [id, w] of this.windows) if (!w.length || w[w.length - 1]! <= now - windowMs) this.windows.delete(id);
  }
}
