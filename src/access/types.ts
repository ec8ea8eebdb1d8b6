// The access layer: who is calling, may they, and what did it cost.
// The router calls it between parsing a request and handing it to the engine.

import type { StoredResponse } from './store.js';

export interface Principal {
  keyId: string;
  accountId: string;
  accountName: string;
  admin: boolean;
  sandbox: boolean;
  /** Requests per minute for this key; undefined = the deployment's default. */
  rateLimit?: number;
  /** The request being served (its x-request-id), when the router knows it: the
   * ledger line of its charge carries it. */
  requestId?: string;
}

export interface RateDecision {
  limit: number;
  remaining: number;
  /** Milliseconds until a slot frees. */
  resetMs: number;
}

export interface UsageRecord {
  model: string;
  prompt_tokens: number;
  completion_tokens: number;
  cost_usd: number;
  /** Defaults to the principal's requestId. */
  request_id?: string;
}

export interface AccountUsage {
  account_id: string;
  name: string;
  sandbox: boolean;
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  spend_usd: number;
}

/** What a request asks to hold against its account's cap at admission. */
export interface ReserveRequest {
  model: string;
  /** The most the request can cost (USD): its prompt tokens (or a bound on them) × the
   * input price + max_tokens (or the context left) × the output price. */
  maxCostUsd: number;
}

export interface SettleOptions {
  /** The reply waits on this charge (a non-streamed answer not sent yet): when the store
   * cannot be reached, settle rejects with 503 store_unavailable, charges nothing and frees
   * the hold, and the caller answers with that error instead of the output. Default: the
   * output was delivered already, so the charge is retried in the background until it
   * lands (and once more on close) and settle does not reject. */
  beforeReply?: boolean;
}

/**
 * A request's hold on its account's spending cap, from admission to its end:
 *
 *   const hold = await access.reserve(principal, { model, maxCostUsd });  // 429 insufficient_quota | 503 store_unavailable
 *   …serve…
 *   await hold.settle({ model, prompt_tokens, completion_tokens, cost_usd });  // or settle(null): nothing delivered
 *
 * Every request that reserved must settle exactly once, on success, error, cancellation
 * and client disconnect alike (a finally block): settle charges what was delivered and
 * frees the rest. A hold never settled (its server died) stops counting when its lease
 * runs out; the holder renews the lease while the request runs. A stream also tells its
 * hold what it has delivered as it goes (`delivered`), which the store keeps: a hold whose
 * process died settles to that (see AccessStore.settleOrphans), so a stream cut by a crash
 * is charged for what it delivered.
 */
export interface Hold {
  readonly id: string;
  /** Lowers what is held once a tighter bound is known (the engine reported the prompt's
   * length); never raises it. Best effort: a failure keeps the larger, safe hold. */
  lower(maxCostUsd: number): void;
  /** What the request has delivered so far (cumulative; a stream calls it as tokens go out).
   * Written to the store at least every 32 completion tokens and every second while it
   * changes; best effort: a write that fails is retried with the next. Optional for an
   * Access of one's own; createAccess's holds have it. */
  delivered?(usage: UsageRecord): void;
  /** Charges `usage` (null: nothing was delivered, charge nothing) and ends the hold.
   * Idempotent: only the first call counts. */
  settle(usage: UsageRecord | null, opts?: SettleOptions): Promise<void>;
}

/** Raised by the access layer; the router turns it into the OpenAI envelope as is. */
export class AccessError extends Error {
  override readonly name = 'AccessError';
  constructor(
    readonly status: 401 | 403 | 429 | 503,
    readonly type: string,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** The access store cannot be reached: the request is refused before anything is served. */
export function storeUnavailable(retryAfterS = 2): AccessError {
  return new AccessError(
    503,
    'server_error',
    'store_unavailable',
    'The access store (keys, limits and spend) cannot be reached right now; nothing was served or charged. Retry shortly.',
    { 'retry-after': String(retryAfterS) },
  );
}

/** The Responses API's stored responses, each owned by the account that made it (another
 * account's id is not found). Every call may throw AccessError 503 store_unavailable. */
export interface StoredResponses {
  /** Keeps a response for the principal's account, then applies the retention limits. */
  put(p: Principal, r: Omit<StoredResponse, 'account_id'>): Promise<void>;
  /** The principal's account's response by that id; undefined for an unknown id, another
   * account's, or one past the retention age. */
  get(p: Principal, id: string): Promise<StoredResponse | undefined>;
  /** False when the account has no response by that id. */
  delete(p: Principal, id: string): Promise<boolean>;
  /** An item (input or output) of one of the account's stored responses, by the item's id
   * (item_reference); undefined when none of the account's live responses holds it. */
  item(p: Principal, itemId: string): Promise<Record<string, unknown> | undefined>;
}

/** Every call that touches the store may also throw AccessError 503 store_unavailable. */
export interface Access {
  /** Stored responses; absent: nothing is stored (`store` is then echoed and ignored). */
  readonly responses?: StoredResponses;
  /** From the Authorization header's value (or null). Throws AccessError 401. */
  authenticate(authorization: string | null): Promise<Principal>;
  /** Counts one request against the key's rate limit. Throws AccessError 429 rate_limit_exceeded. */
  admit(p: Principal): Promise<RateDecision>;
  /** Throws AccessError 429 insufficient_quota when the account is at or over its cap. */
  checkQuota(p: Principal): Promise<void>;
  /** Holds the most the request can cost against the account's cap (sandbox accounts; others
   * are never refused). Throws AccessError 429 insufficient_quota when it does not fit. */
  reserve(p: Principal, req: ReserveRequest): Promise<Hold>;
  close(): Promise<void>;
}
