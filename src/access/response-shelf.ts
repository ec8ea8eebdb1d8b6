// Where the in-process stores keep stored responses. Apart from the access state:
// responses are large and deleted by retention, which an append-only log replayed on
// every open would keep forever. The memory store keeps them in a map; the file store
// in files of their own (file-responses.ts).

import { STORABLE_ID, type ResponsePrune, type StoredResponse } from './store.js';

export interface ResponseShelf {
  put(r: StoredResponse): void;
  get(id: string, accountId: string): StoredResponse | undefined;
  delete(id: string, accountId: string): boolean;
  prune(p: ResponsePrune): number;
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

  put(r: StoredResponse): void {
    let rs = this.byAccount.get(r.account_id);
    if (!rs) this.byAccount.set(r.account_id, (rs = new Map()));
    rs.delete(r.id);
    rs.set(r.id, structuredClone(r));
  }

  get(id: string, accountId: string): StoredResponse | undefined {
    if (!STORABLE_ID.test(id)) return undefined;
    const r = this.byAccount.get(accountId)?.get(id);
    return r && structuredClone(r);
  }

  delete(id: string, accountId: string): boolean {
    return this.byAccount.get(accountId)?.delete(id) ?? false;
  }

  prune(p: ResponsePrune): number {
    let n = 0;
    for (const [acct, rs] of this.byAccount) {
      if (p.accountId !== undefined && acct !== p.accountId) continue;
      const ids = toPrune(new Map([...rs].map(([id, r]) => [id, r.created])), p.accountId === undefined ? { before: p.before } : p);
      for (const id of ids) rs.delete(id);
      n += ids.length;
    }
    return n;
  }
}
