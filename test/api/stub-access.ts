// A stub Access for the router's tests: one known key, a switchable rate limit
// and spending cap, and a list of what was held and charged.
import { AccessError, type Access, type Hold, type Principal, type RateDecision, type ReserveRequest, type UsageRecord } from '../../src/access/types.js';

export const GOOD_KEY = 'svc_live_' + 'a'.repeat(40);
export const AUTH = { authorization: `Bearer ${GOOD_KEY}` };

export class StubAccess implements Access {
  limit = 60;
  used = 0;
  overQuota = false;
  readonly records: { p: Principal; usage: UsageRecord }[] = [];
  readonly principal: Principal = { keyId: 'key_1', accountId: 'acct_1', accountName: 'test', admin: false, sandbox: true };

  async authenticate(authorization: string | null): Promise<Principal> {
    if (authorization !== `Bearer ${GOOD_KEY}`) {
      throw new AccessError(401, 'invalid_request_error', 'invalid_api_key', 'Incorrect API key provided.');
    }
    return this.principal;
  }

  async admit(_p: Principal): Promise<RateDecision> {
    if (this.used >= this.limit) {
      throw new AccessError(429, 'requests', 'rate_limit_exceeded', 'Rate limit reached for requests.', {
        'retry-after': '7',
        'x-ratelimit-limit-requests': String(this.limit),
        'x-ratelimit-remaining-requests': '0',
        'x-ratelimit-reset-requests': '7s',
      });
    }
    this.used++;
    return { limit: this.limit, remaining: this.limit - this.used, resetMs: 360_000 };
  }

  async checkQuota(_p: Principal): Promise<void> {
    if (this.overQuota) {
      throw new AccessError(429, 'insufficient_quota', 'insufficient_quota', 'You exceeded your current quota.', {
        'x-should-retry': 'false',
      });
    }
  }

  /** What each request held at admission, what it lowered that to, what it reported as
   * delivered (streams), and whether it settled (every hold must). */
  readonly holds: { req: ReserveRequest; lowered: number[]; delivered: UsageRecord[]; settled: boolean }[] = [];

  async reserve(p: Principal, req: ReserveRequest): Promise<Hold> {
    const h = { req, lowered: [] as number[], delivered: [] as UsageRecord[], settled: false };
    this.holds.push(h);
    return {
      id: `hold_${this.holds.length}`,
      lower: (usd: number) => h.lowered.push(usd),
      delivered: (usage: UsageRecord) => h.delivered.push(usage),
      settle: async (usage: UsageRecord | null) => {
        if (h.settled) return;
        h.settled = true;
        if (usage) this.records.push({ p, usage });
      },
    };
  }

  async close(): Promise<void> {}
}
