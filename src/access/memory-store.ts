// The memory store: everything in this process, gone when it exits. For tests,
// the in-process MSW double and the browser.

import {
  checkReservation,
  checkStoredResponse,
  checkUsage,
  type AccessStore,
  type AccountRow,
  type Delivery,
  type KeyRow,
  type Reservation,
  type ReserveResult,
  type ResponsePrune,
  type SlotResult,
  type StoredItem,
  type StoredResponse,
  type UsageEntry,
  type UsageTotals,
} from './store.js';
import { AccessState, type HolderProcess, type LogRecord } from './state.js';
import { MemoryShelf, type ResponseShelf } from './response-shelf.js';

/** Base for stores whose queries are answered from an AccessState in this process. */
export abstract class StateBackedStore implements AccessStore {
  abstract readonly kind: string;
  protected state = new AccessState();
  protected closed = false;
  /** Where stored responses live (kept apart from the state: see response-shelf.ts). */
  protected abstract readonly shelf: ResponseShelf;

  /** Persists (if the store persists) and applies one mutation. */
  protected abstract commit(record: LogRecord, durable: boolean): void;
  /** Brings the state up to date with changes made elsewhere (no-op in memory). */
  protected sync(): void {}
  /** This process, as the store records a hold's holder (nothing in memory: its holds die with it). */
  protected holder(): HolderProcess {
    return {};
  }
  /** Whether a hold's holder is known to be dead (a memory store never knows). */
  protected holderGone(_h: HolderProcess): boolean {
    return false;
  }

  private live(): void {
    if (this.closed) throw new Error(`the ${this.kind} access store is closed`);
  }

  async createAccount(account: AccountRow): Promise<void> {
    this.live();
    this.sync();
    this.state.checkAccount(account);
    this.commit({ t: 'account', ...clean(account) }, true);
  }

  async getAccount(id: string): Promise<AccountRow | undefined> {
    this.live();
    this.sync();
    const a = this.state.accounts.get(id);
    return a && { ...a };
  }

  async listAccounts(): Promise<AccountRow[]> {
    this.live();
    this.sync();
    return [...this.state.accounts.values()].map((a) => ({ ...a }));
  }

  async createKey(key: KeyRow): Promise<void> {
    this.live();
    this.sync();
    this.state.checkKey(key);
    this.commit({ t: 'key', ...clean(key) }, true);
  }

  async getKey(id: string): Promise<KeyRow | undefined> {
    this.live();
    this.sync();
    const k = this.state.keys.get(id);
    return k && { ...k };
  }

  async findKeyByHash(hash: string): Promise<KeyRow | undefined> {
    this.live();
    this.sync();
    return this.state.findKeyByHash(hash);
  }

  async listKeys(): Promise<KeyRow[]> {
    this.live();
    this.sync();
    return [...this.state.keys.values()].map((k) => ({ ...k }));
  }

  async revokeKey(id: string, at: number): Promise<KeyRow | undefined> {
    this.live();
    this.sync();
    const k = this.state.keys.get(id);
    if (!k) return undefined;
    if (k.revoked_at === undefined) this.commit({ t: 'revoke', id, at }, true);
    return { ...this.state.keys.get(id)! };
  }

  async appendUsage(entry: UsageEntry): Promise<void> {
    this.live();
    checkUsage(entry);
    this.sync();
    this.commit({ t: 'usage', ...clean(entry) }, true);
  }

  // Check and commit run with no await between them: exact within this process.
  async reserve(r: Reservation, capUsd: number, month: string, now: number): Promise<ReserveResult> {
    this.live();
    checkReservation(r);
    this.sync();
    const held = this.state.reservations.get(r.id);
    if (held || this.state.chargeOf(r.id) !== undefined) {
      const spent = this.state.accountMonthTotals(r.account_id, month).spend_usd;
      return { ok: held !== undefined, spent_usd: spent, held_usd: this.state.heldUsd(r.account_id, now) - (held?.amount_usd ?? 0) };
    }
    const res = this.state.checkReserve(r, capUsd, month, now);
    if (res.ok) this.commit({ t: 'reserve', ...clean(r) }, true);
    return res;
  }

  async renewReservation(id: string, _accountId: string, amountUsd: number, expires: number): Promise<boolean> {
    this.live();
    this.sync();
    if (!this.state.reservations.has(id)) return false;
    // Not fsynced: a lost renewal only lets the hold expire sooner, which a crash does anyway.
    this.commit({ t: 'renew', id, amount_usd: amountUsd, expires }, false);
    return true;
  }

  async settle(reservation: { id: string; account_id: string }, entry?: UsageEntry): Promise<void> {
    this.live();
    if (entry) checkUsage(entry);
    this.sync();
    const charged = this.state.chargeOf(reservation.id);
    if (entry) {
      if (charged === undefined) this.commit({ t: 'usage', ...clean(entry), hold: reservation.id }, true);
    } else if (charged || (charged === undefined && (this.state.reservations.has(reservation.id) || this.state.deliveries.has(reservation.id)))) {
      this.commit({ t: 'release', id: reservation.id, ts: Date.now() }, true);
    }
  }

  async recordDelivery(d: Delivery): Promise<void> {
    this.live();
    checkUsage(d.entry);
    this.sync();
    if (this.state.chargeOf(d.id) !== undefined) return;
    // Not fsynced: a write() outlives the process being killed (the crash this is for),
    // and the next durable line takes it along; a fast stream writes many of these.
    this.commit(clean(this.state.deliverRecord({ ...d, entry: clean(d.entry) }, this.holder())), false);
  }

  async settleOrphans(now: number): Promise<number> {
    this.live();
    return this.settleOrphansNow(now);
  }

  protected settleOrphansNow(now: number): number {
    this.sync();
    let settled = 0;
    for (const d of [...this.state.deliveries.values()]) {
      if (d.expires > now && !this.holderGone(d)) continue;
      this.commit({ t: 'usage', ...clean(d.entry), hold: d.id }, true);
      settled++;
    }
    for (const r of [...this.state.reservations.values()]) {
      if (this.state.deliveries.has(r.id) || !this.holderGone(r)) continue;
      this.commit({ t: 'release', id: r.id, ts: now }, true);
      settled++;
    }
    return settled;
  }

  async monthTotals(month: string): Promise<UsageTotals[]> {
    this.live();
    this.sync();
    return this.state.monthTotals(month);
  }

  async accountMonthTotals(accountId: string, month: string): Promise<UsageTotals> {
    this.live();
    this.sync();
    return this.state.accountMonthTotals(accountId, month);
  }

  async takeSlot(keyId: string, limit: number, windowMs: number, now: number): Promise<SlotResult> {
    this.live();
    return this.state.takeSlot(keyId, limit, windowMs, now);
  }

  async putResponse(r: StoredResponse): Promise<void> {
    this.live();
    checkStoredResponse(r);
    this.shelf.put(r);
  }

  async getResponse(id: string, accountId: string): Promise<StoredResponse | undefined> {
    this.live();
    return this.shelf.get(id, accountId);
  }

  async deleteResponse(id: string, accountId: string): Promise<boolean> {
    this.live();
    return this.shelf.delete(id, accountId);
  }

  async pruneResponses(p: ResponsePrune): Promise<number> {
    this.live();
    return this.shelf.prune(p);
  }

  async getResponseItem(itemId: string, accountId: string): Promise<StoredItem | undefined> {
    this.live();
    return this.shelf.item(itemId, accountId);
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}

/** Drops undefined fields so rows compare and serialise the same everywhere. */
function clean<T extends object>(row: T): T {
  const out = {} as T;
  for (const [k, v] of Object.entries(row)) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  return out;
}

export class MemoryStore extends StateBackedStore {
  readonly kind = 'memory';
  protected readonly shelf = new MemoryShelf();
  protected commit(record: LogRecord): void {
    this.state.apply(structuredClone(record));
  }
}

export function createMemoryStore(): AccessStore {
  return new MemoryStore();
}
