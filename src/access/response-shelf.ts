// Where the in-process stores keep stored responses. Apart from the access state:
// responses are large and deleted by retention, which an append-only log replayed on
// every open would keep forever. The memory store keeps them in a map; the file store
// in files of their own (file-responses.ts). Each also keeps an index from item ids to
// the responses holding those items (item_reference), changed with the responses.

import { responseItems, STORABLE_ID, type ResponsePrune, type StoredItem, type StoredResponse } from './store.js';

export interface ResponseShelf {
  put(r: StoredResponse): void;
  get(id: string, accountId: string): StoredResponse | undefined;
  delete(id: string, accountId: string): boolean;
  prune(p: ResponsePrune): number;
  /** The item by its id from the newest of the account's responses holding it. */
  item(itemId: string, accountId: string): StoredItem | undefined;
}

/** Ids to delete from one account's responses, given each one's creation time. */
export function toPrune(created: Map<string, number>, p: ResponsePrune): string[] {
  const gone = new Set<string>();
  if (p.before !== undefined) for (const [id, t] of created) if (t < p.before) gone.add(id);
  if (p.keep !== undefined) {
    const left = [...created].filter(([id]) => !gone.has(id));
    // Oldest first; the same time keeps the order of storing (a Map's order).
    left.sort((a, b) => a[1] - b[1]);
    for (const [id] of left.slice(0, Math.max(0, left.length - p.keep))) gone.add(id);
  }
  return [...gone];
}

export class MemoryShelf implements ResponseShelf {
  /** account id → response id → the response (in the order stored). */
  private readonly byAccount = new Map<string, Map<string, StoredResponse>>();
  /** account id → item id → the ids of the account's responses holding that item. */
  private readonly items = new Map<string, Map<string, Set<string>>>();

  put(r: StoredResponse): void {
    let rs = this.byAccount.get(r.account_id);
    if (!rs) this.byAccount.set(r.account_id, (rs = new Map()));
    this.remove(rs, r.id, r.account_id);
    rs.set(r.id, structuredClone(r));
    let index = this.items.get(r.account_id);
    if (!index) this.items.set(r.account_id, (index = new Map()));
    for (const itemId of responseItems(r).keys()) {
      let holders = index.get(itemId);
      if (!holders) index.set(itemId, (holders = new Set()));
      holders.add(r.id);
    }
  }

  /** Takes a response and its index entries out; false when the account has none by that id. */
  private remove(rs: Map<string, StoredResponse>, id: string, accountId: string): boolean {
    const r = rs.get(id);
    if (!r) return false;
    rs.delete(id);
    const index = this.items.get(accountId);
    for (const itemId of responseItems(r).keys()) {
      const holders = index?.get(itemId);
      holders?.delete(id);
      if (holders?.size === 0) index!.delete(itemId);
    }
    return true;
  }

  item(itemId: string, accountId: string): StoredItem | undefined {
    if (!STORABLE_ID.test(itemId)) return undefined;
    const holders = this.items.get(accountId)?.get(itemId);
    const rs = this.byAccount.get(accountId);
    let newest: StoredResponse | undefined;
    for (const id of holders ?? []) {
      const r = rs?.get(id);
      if (r && (!newest || r.created >= newest.created)) newest = r;
    }
    const item = newest && responseItems(newest).get(itemId);
    return item && { item: structuredClone(item), response_id: newest!.id, created: newest!.created };
  }

  get(id: string, accountId: string): StoredResponse | undefined {
    if (!STORABLE_ID.test(id)) return undefined;
    const r = this.byAccount.get(accountId)?.get(id);
    return r && structuredClone(r);
  }

  delete(id: string, accountId: string): boolean {
    const rs = this.byAccount.get(accountId);
    return rs ? this.remove(rs, id, accountId) : false;
  }

  prune(p: ResponsePrune): number {
    let n = 0;
    for (const [acct, rs] of this.byAccount) {
      if (p.accountId !== undefined && acct !== p.accountId) continue;
      const ids = toPrune(new Map([...rs].map(([id, r]) => [id, r.created])), p.accountId === undefined ? { before: p.before } : p);
      for (const id of ids) this.remove(rs, id, acct);
      n += ids.length;
    }
    return n;
  }
}
