// The access layer: who is calling, may they, and what did it cost.
// The router calls it between parsing a request and handing it to the engine.

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

/** Raised by the access layer; the router turns it into the OpenAI envelope as is. */
export class AccessError extends Error {
  override readonly name = 'AccessError';
  constructor(
    readonly status: 401 | 403 | 429,
    readonly type: string,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export interface Access {
  /** From the Authorization header's value (or null). Throws AccessError 401. */
  authenticate(authorization: string | null): Promise<Principal>;
  /** Counts one request against the key's rate limit. Throws AccessError 429 rate_limit_exceeded. */
  admit(p: Principal): Promise<RateDecision>;
  /** Throws AccessError 429 insufficient_quota when the account is at or over its cap. */
  checkQuota(p: Principal): Promise<void>;
  /** Records a served request's tokens and cost. */
  record(p: Principal, usage: UsageRecord): Promise<void>;
  close(): Promise<void>;
}
