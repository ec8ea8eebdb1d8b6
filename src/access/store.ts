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

/** Part of an account's cap held for a request in flight: the most it can cost. */
export interface Reservation {
  id: string; // hold_…
  account_id: string;
  amount_usd: number;
  /** Unix ms after which it no longer counts (the holder renews it while the request runs,
   * so one left by a crashed server frees itself). */
  expires: number;
  /** The holding process, where the store can tell whether it still lives (the file store). */
  pid?: number;
  /** Its machine, and a random id of the process itself (a pid can be reused). */
  host?: string;
  proc?: string;
}

/** What a hold's request (a stream) has delivered so far: the charge it would settle to now. */
export interface Delivery {
  /** The hold's id (held on the cap or not: any stream's charge must survive its process). */
  id: string;
  account_id: string;
  entry: UsageEntry;
  /** Unix ms after which a hold whose holder stopped renewing it settles to `entry`. */
  expires: number;
}

/** A response the Responses API stored (`store` not false), owned by the account that made it. */
export interface StoredResponse {
  id: string; // resp_…
  account_id: string;
  created: number; // unix ms
  /** The response object as it was answered. */
  response: Record<string, unknown>;
  /** The conversation it answered, each item with its id: the items of the response it
   * continued (their input, then their output), then its own input. */
  input_items: Record<string, unknown>[];
}

/** An item of a stored response (an input item or an output item), as found by its id. */
export interface StoredItem {
  /** The item as the response keeps it: listed with its id (or an output item). */
  item: Record<string, unknown>;
  /** The newest of the account's responses that holds it (an item is held by the response
   * that took or made it and by every response continuing from that one). */
  response_id: string;
  /** That response's creation time (unix ms): retention reads it. */
  created: number;
}

/** What pruneResponses removes: responses created before `before` (of `accountId`, or of
 * every account when it is absent) and, of `accountId`'s, all but the newest `keep`. */
export interface ResponsePrune {
  accountId?: string;
  before?: number;
  keep?: number;
}

/** The answer of reserve: whether the hold was taken, and the account's state as seen. */
export interface ReserveResult {
  ok: boolean;
  /** Spend this month before the hold. */
  spent_usd: number;
  /** Held by other requests in flight (unexpired), before the hold. */
  held_usd: number;
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

  /** Holds `r.amount_usd` of the account's cap if spend in `month` + what is held +
   * the amount stays within `capUsd`; check and hold are one atomic step. Reservations
   * whose `expires` is at or before `now` are dropped. Holding an id already held
   * changes nothing and answers ok (a resent command is harmless). */
  reserve(r: Reservation, capUsd: number, month: string, now: number): Promise<ReserveResult>;
  /** Moves a held reservation's expiry to `expires` and lowers its amount to `amountUsd`
   * if that is less (never raises it). False when it is no longer held. */
  renewReservation(id: string, accountId: string, amountUsd: number, expires: number): Promise<boolean>;
  /** Ends a reservation and, when `entry` is given, appends it to the ledger: one atomic
   * step, durable when the promise resolves. Idempotent per reservation id: settling it
   * again (a retry after a lost reply) charges nothing more. An unknown or expired id
   * still has its entry charged. Without `entry` the request ends uncharged: a charge
   * already settled under this id is undone (its write timed out, the caller refused the
   * reply, and the write landed after all), and a later charge under it is ignored. */
  settle(reservation: { id: string; account_id: string }, entry?: UsageEntry): Promise<void>;

  /** Keeps what a hold's request has delivered so far (replacing what was kept before), and
   * renews it to `d.expires`. Ignored once the hold is settled. */
  recordDelivery(d: Delivery): Promise<void>;
  /** Settles orphaned holds, whose process is gone: each hold with a delivery whose lease ran
   * out (at or before `now`), or whose holder the store can tell is dead (the same machine),
   * is charged that delivery, once, as settle(hold, entry) would; a dead holder's hold with
   * no delivery is released. Stores run it when opened; servers also call it now and then.
   * Returns how many holds it settled. */
  settleOrphans(now: number): Promise<number>;

  /** Keeps a response (replacing one stored under its id); durable when the promise resolves. */
  putResponse(r: StoredResponse): Promise<void>;
  /** The response stored under `id` when `accountId` owns it; undefined otherwise, as for an id never stored. */
  getResponse(id: string, accountId: string): Promise<StoredResponse | undefined>;
  /** Deletes the response stored under `id` when `accountId` owns it; false when there was none of theirs. */
  deleteResponse(id: string, accountId: string): Promise<boolean>;
  /** Retention (see ResponsePrune); returns how many responses it deleted. */
  pruneResponses(p: ResponsePrune): Promise<number>;
  /** An item of one of `accountId`'s stored responses by the item's id (item_reference): an
   * index kept with the responses, whose entries go when the last response holding the item
   * is deleted or pruned. Undefined for an id no response of that account holds, as for an
   * id never stored (only ids of STORABLE_ID's letters are indexed). */
  getResponseItem(itemId: string, accountId: string): Promise<StoredItem | undefined>;

  close(): Promise<void>;
}

/** "YYYY-MM" of a unix-ms time, in UTC. */
export function utcMonth(ts: number): string {
  return new Date(ts).toISOString().slice(0, 7);
}

export function checkUsage(entry: UsageEntry): void {
  for (const f of ['ts', 'prompt_tokens', 'completion_tokens', 'cost_usd'] as const) {
    if (typeof entry[f] !== 'number' || !Number.isFinite(entry[f]) || entry[f] < 0) {
      throw new Error(`usage entry: ${f} must be a finite number ≥ 0`);
    }
  }
}

export function checkReservation(r: Reservation): void {
  if (!r.id || !r.account_id) throw new Error('reservation: needs an id and an account id');
  if (!(r.amount_usd >= 0) || !Number.isFinite(r.amount_usd)) throw new Error('reservation: amount_usd must be a finite number ≥ 0');
}

/** Ids a store may use in a key or a file name; any other id (from a URL) is simply not found. */
export const STORABLE_ID = /^[A-Za-z0-9_-]{1,128}$/;

/** The items of a stored response that its item index holds: its input items and its
 * output, each with a storable id (others cannot be referenced). An id met twice counts once. */
export function responseItems(r: StoredResponse): Map<string, Record<string, unknown>> {
  const out = new Map<string, Record<string, unknown>>();
  const output = Array.isArray(r.response.output) ? (r.response.output as unknown[]) : [];
  for (const item of [...r.input_items, ...output]) {
    const id = item && typeof item === 'object' ? (item as { id?: unknown }).id : undefined;
    if (typeof id === 'string' && STORABLE_ID.test(id) && !out.has(id)) out.set(id, item as Record<string, unknown>);
  }
  return out;
}

export function checkStoredResponse(r: StoredResponse): void {
  if (!STORABLE_ID.test(r.id) || !STORABLE_ID.test(r.account_id)) throw new Error('stored response: needs an id and an account id of letters, digits, _ and -');
  if (!Number.isFinite(r.created)) throw new Error('stored response: created must be a time in unix ms');
  if (!r.response || typeof r.response !== 'object' || !Array.isArray(r.input_items)) throw new Error('stored response: needs the response object and its input items');
}
