// The storage interface of the access layer. Every store (memory, file, and later
// redis) implements it and passes the same contract suite (test/access/store-contract.ts).
// Methods are async so that a networked store fits; the in-process stores do each
// method's work synchronously inside the call, which is what makes rate limiting exact.

export interface AccountRow {
  id: string; // acct_…
  name: string;
  sandbox: boolean;
  created: number; // unix ms
}

export interface KeyRow {
  id: string; // key_…
  account_id: string;
  /** SHA-256 hex of the key. The key itself is never stored. */
  hash: string;
  name: string;
  admin: boolean;
  /** Requests per minute; undefined = the deployment's default. */
  rate_limit?: number;
  created: number; // unix ms
  revoked_at?: number; // unix ms
}

export interface UsageEntry {
  ts: number; // unix ms
  account_id: string;
  key_id: string;
  model: string;
  prompt_tokens: number;
  completion_tokens: number;
  cost_usd: number;
  /** The x-request-id of the request charged (lets an audit spot a charge made twice). */
  request_id?: string;
}

/** One account's usage over one UTC calendar month. */
export interface UsageTotals {
  account_id: string;
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  spend_usd: number;
}

/** The answer of takeSlot: whether the request got a slot in the window. */
export interface SlotResult {
  allowed: boolean;
  limit: number;
  /** Slots left after this request (0 when refused). */
  remaining: number;
  /** Milliseconds until the oldest request in the window leaves it (a slot frees). */
  resetMs: number;
}

export interface AccessStore {
  /** "memory", "file", "redis". */
  readonly kind: string;

  /** Throws if the id is taken. */
  createAccount(account: AccountRow): Promise<void>;
  getAccount(id: string): Promise<AccountRow | undefined>;
  listAccounts(): Promise<AccountRow[]>;

  /** Throws if the id or hash is taken, or the account does not exist. */
  createKey(key: KeyRow): Promise<void>;
  getKey(id: string): Promise<KeyRow | undefined>;
  /** Looks a key up by its hash; a store sharing its data with other processes
   * sees their changes (a key revoked by the CLI) here. */
  findKeyByHash(hash: string): Promise<KeyRow | undefined>;
  listKeys(): Promise<KeyRow[]>;
  /** Marks a key revoked at `at`; keeps the first revoked_at if already revoked.
   * Returns the row after the change, undefined for an unknown id. */
  revokeKey(id: string, at: number): Promise<KeyRow | undefined>;

  /** Appends to the ledger; durable when the promise resolves. */
  appendUsage(entry: UsageEntry): Promise<void>;
  /** Usage per account in the UTC month `month` ("YYYY-MM"); accounts without usage are absent. */
  monthTotals(month: string): Promise<UsageTotals[]>;
  /** One account's usage in that month (zeros when none). */
  accountMonthTotals(accountId: string, month: string): Promise<UsageTotals>;

  /** Sliding-window rate limit: counts one request for `keyId` at `now` if fewer than
   * `limit` were counted in (now - windowMs, now]. Check and count are one atomic step. */
  takeSlot(keyId: string, limit: number, windowMs: number, now: number): Promise<SlotResult>;

  close(): Promise<void>;
}

/** "YYYY-MM" of a unix-ms time, in UTC. */
export function utcMonth(ts: number): string {
  return new Date(ts).toISOString().slice(0, 7);
}
