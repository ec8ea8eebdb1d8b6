// createAccess: the Access the router calls (authenticate → admit → checkQuota →
// reserve … settle), plus the operator's functions (keys, usage) the CLI and serve use.
// Runs in Node and in browsers; persistence is the store's business.

import {
  AccessError,
  storeUnavailable,
  type Access,
  type AccountUsage,
  type Hold,
  type Principal,
  type RateDecision,
  type ReserveRequest,
  type StoredResponses,
  type UsageRecord,
} from './types.js';
import { createHold, newHoldId, Retries, usageEntry } from './hold.js';
import type { AccessStore, AccountRow, KeyRow } from './store.js';
import { utcMonth } from './store.js';
import { formatResetDuration } from './format.js';
import { KEY_PREFIX, generateAccountId, generateKey, generateKeyId, hashKey, isKeyId, isWellFormedKey } from './keys.js';

export { formatResetDuration } from './format.js';

export const RATE_WINDOW_MS = 60_000;

export interface AccessOptions {
  store: AccessStore;
  /** Requests per minute per key, unless the key sets its own (default 60). */
  rateLimit?: number;
  /** Monthly (UTC calendar month) cap of sandbox accounts in USD (default 5). */
  sandboxCapUsd?: number;
  now?: () => number;
  /** Accept any well-formed svc_live_ key that the store does not know as a synthetic,
   * non-sandbox, non-admin principal (the in-process MSW double has no accounts).
   * Keys the store knows are still checked (a revoked one is refused). */
  acceptAnyWellFormedKey?: boolean;
  /** How long a hold on the cap counts unless renewed (default 2 minutes): the longest a
   * server that died mid-request can block part of an account's cap. */
  holdLeaseMs?: number;
  /** How many stored responses each account keeps (the oldest go first) and for how long;
   * defaults: 1000 and 30 days (OpenAI keeps stored responses 30 days). */
  responseRetention?: ResponseRetention;
}

export interface ResponseRetention {
  perAccount?: number;
  maxAgeMs?: number;
}

export const DEFAULT_RESPONSE_RETENTION = { perAccount: 1000, maxAgeMs: 30 * 86_400_000 } as const;

/** How often responses past the retention age are swept from the store. */
const RESPONSE_SWEEP_MS = 3_600_000;

export interface CreateKeyOptions {
  /** The key's name, and the name of the account created for it (default "default"). */
  name?: string;
  sandbox?: boolean;
  admin?: boolean;
  /** Requests per minute for this key; omitted = the deployment's default. */
  rateLimit?: number;
}

export interface CreatedKey {
  /** The secret: shown once, never stored. */
  key: string;
  id: string;
  account_id: string;
}

export interface KeyInfo {
  id: string;
  name: string;
  account_id: string;
  /** The account's name. */
  account: string;
  admin: boolean;
  sandbox: boolean;
  rate_limit?: number;
  created: string; // ISO 8601
  revoked: boolean;
  revoked_at?: string; // ISO 8601
}

export interface HearthAccess extends Access {
  readonly store: AccessStore;
  readonly responses: StoredResponses;
  /** Appends a charge with no hold on the cap (imports, tests); requests use reserve. */
  record(p: Principal, usage: UsageRecord): Promise<void>;
  usageThisMonth(): Promise<AccountUsage[]>;
  createKey(opts?: CreateKeyOptions): Promise<CreatedKey>;
  /** Registers a key chosen by the caller (for example the MSW double's `apiKeys`). */
  addKey(key: string, opts?: CreateKeyOptions): Promise<Omit<CreatedKey, 'key'>>;
  listKeys(): Promise<KeyInfo[]>;
  /** By the key itself or its id. Throws if there is no such key; revoking twice is a no-op. */
  revokeKey(keyOrId: string): Promise<KeyInfo>;
  /** When the store holds no keys at all, creates an admin key named "default" and
   * returns it (serve prints it on a first start); otherwise null. */
  ensureFirstKey(): Promise<string | null>;
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

function invalidKey(message: string): AccessError {
  return new AccessError(401, 'invalid_request_error', 'invalid_api_key', message);
}

/** Rounds float noise off money sums (nano-dollar precision). */
export function roundUsd(x: number): number {
  return Math.round(x * 1e9) / 1e9;
}

function positiveInt(name: string, v: number | undefined, dflt: number): number {
  const n = v ?? dflt;
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`${name} must be a positive integer (got ${v})`);
  return n;
}

export function createAccess(options: AccessOptions): HearthAccess {
  const { store } = options;
  const defaultLimit = positiveInt('rateLimit', options.rateLimit, 60);
  const cap = options.sandboxCapUsd ?? 5;
  if (!(cap >= 0) || !Number.isFinite(cap)) throw new RangeError(`sandboxCapUsd must be a number ≥ 0 (got ${cap})`);
  const now = options.now ?? (() => Date.now());
  const retries = new Retries();
  const holds = { store, now, leaseMs: options.holdLeaseMs ?? 120_000, retries };
  // Holds whose process died settle to what their streams delivered: the store does it
  // when opened (a restart), and this catches the holds of servers that never come back
  // (another machine's, sharing redis) once their leases have run out.
  const sweeper = setInterval(() => void store.settleOrphans(now()).catch(() => {}), holds.leaseMs);
  (sweeper as { unref?: () => void }).unref?.();
  const keep = positiveInt('responseRetention.perAccount', options.responseRetention?.perAccount, DEFAULT_RESPONSE_RETENTION.perAccount);
  const maxAgeMs = options.responseRetention?.maxAgeMs ?? DEFAULT_RESPONSE_RETENTION.maxAgeMs;
  if (!(maxAgeMs > 0)) throw new RangeError(`responseRetention.maxAgeMs must be a number > 0 (got ${maxAgeMs})`);
  // Responses past their age are swept now and then (and not served meanwhile: see get).
  const sweepResponses = () => void store.pruneResponses({ before: now() - maxAgeMs }).catch(() => {});
  sweepResponses();
  const responseSweeper = setInterval(sweepResponses, Math.min(RESPONSE_SWEEP_MS, maxAgeMs));
  (responseSweeper as { unref?: () => void }).unref?.();

  /** A store that fails (redis away or frozen past its command timeout, a disk error)
   * refuses the request with 503 store_unavailable rather than a 500. */
  let lastFault = { message: '', at: 0 };
  async function reach<T>(op: Promise<T>): Promise<T> {
    try {
      return await op;
    } catch (err) {
      // Said once per cause (and every 10 s while it lasts), not once per refused request.
      const message = err instanceof Error ? err.message : String(err);
      if (message !== lastFault.message || now() - lastFault.at > 10_000) {
        console.error(`hearth: access store (${store.kind}) failed: ${message}; answering 503 store_unavailable`);
        lastFault = { message, at: now() };
      }
      throw storeUnavailable();
    }
  }

  async function authenticate(authorization: string | null): Promise<Principal> {
    if (authorization == null || authorization.trim() === '') {
      throw invalidKey(
        "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
      );
    }
    const m = BEARER.exec(authorization);
    if (!m) {
      throw invalidKey('The Authorization header must use Bearer auth (i.e. Authorization: Bearer YOUR_KEY).');
    }
    const key = m[1]!;
    if (!key.startsWith(KEY_PREFIX)) {
      throw invalidKey(`Incorrect API key provided. Hearth keys start with "${KEY_PREFIX}"; create one with \`hearth keys create\`.`);
    }
    if (!isWellFormedKey(key)) {
      throw invalidKey(`Incorrect API key provided: the key is malformed (expected "${KEY_PREFIX}" followed by at least 32 letters and digits).`);
    }
    const hash = await hashKey(key);
    const row = await reach(store.findKeyByHash(hash));
    if (!row) {
      if (options.acceptAnyWellFormedKey) {
        const tag = hash.slice(0, 12);
        return { keyId: `key_${tag}`, accountId: `acct_${tag}`, accountName: 'test', admin: false, sandbox: false };
      }
      throw invalidKey('Incorrect API key provided. Create a key with `hearth keys create`.');
    }
    if (row.revoked_at !== undefined) throw invalidKey('The API key provided has been revoked.');
    const account = await reach(store.getAccount(row.account_id));
    if (!account) throw invalidKey('Incorrect API key provided: its account no longer exists.');
    const p: Principal = {
      keyId: row.id,
      accountId: account.id,
      accountName: account.name,
      admin: row.admin,
      sandbox: account.sandbox,
    };
    if (row.rate_limit !== undefined) p.rateLimit = row.rate_limit;
    return p;
  }

  async function admit(p: Principal): Promise<RateDecision> {
    const limit = p.rateLimit ?? defaultLimit;
    const slot = await reach(store.takeSlot(p.keyId, limit, RATE_WINDOW_MS, now()));
    if (slot.allowed) return { limit: slot.limit, remaining: slot.remaining, resetMs: slot.resetMs };
    const reset = formatResetDuration(slot.resetMs);
    throw new AccessError(
      429,
      'requests',
      'rate_limit_exceeded',
      `Rate limit reached for requests on key ${p.keyId}: limit ${limit} requests per minute. Please try again in ${reset}.`,
      {
        'retry-after': String(Math.max(1, Math.ceil(slot.resetMs / 1000))),
        'x-ratelimit-limit-requests': String(limit),
        'x-ratelimit-remaining-requests': '0',
        'x-ratelimit-reset-requests': reset,
      },
    );
  }

  async function checkQuota(p: Principal): Promise<void> {
    if (!p.sandbox) return;
    const spent = (await reach(store.accountMonthTotals(p.accountId, utcMonth(now())))).spend_usd;
    if (spent >= cap) throw overQuota(`this account has spent ${roundUsd(spent)} USD this month.`);
  }

  function overQuota(why: string): AccessError {
    return new AccessError(
      429,
      'insufficient_quota',
      'insufficient_quota',
      `You exceeded your current quota, please check your plan and billing details. Sandbox accounts may spend ${cap} USD per calendar month (UTC); ${why}`,
      { 'x-should-retry': 'false' },
    );
  }

  async function record(p: Principal, usage: UsageRecord): Promise<void> {
    await store.appendUsage(usageEntry(p, usage, now()));
  }

  async function reserve(p: Principal, req: ReserveRequest): Promise<Hold> {
    const amount = req.maxCostUsd;
    if (!(amount >= 0) || !Number.isFinite(amount)) throw new RangeError(`maxCostUsd must be a finite number ≥ 0 (got ${amount})`);
    if (!p.sandbox) return createHold(holds, p, req.model, amount, false);
    const id = newHoldId();
    const t = now();
    const r = await reach(store.reserve({ id, account_id: p.accountId, amount_usd: amount, expires: t + holds.leaseMs }, cap, utcMonth(t), t)).catch(
      (err: unknown) => {
        // The hold may have landed although its reply did not: free it once the store is back.
        retries.add(id, () => store.settle({ id, account_id: p.accountId }), 'the release of a hold');
        throw err;
      },
    );
    if (!r.ok) {
      throw overQuota(
        `this account has spent ${roundUsd(r.spent_usd)} USD this month and holds ${roundUsd(r.held_usd)} USD for requests in flight, and this request could cost up to ${roundUsd(amount)} USD. Lower max_tokens or wait for requests in flight to finish.`,
      );
    }
    return createHold(holds, p, req.model, amount, true, id);
  }

  const responses: StoredResponses = {
    async put(p, r) {
      await reach(store.putResponse({ ...r, account_id: p.accountId }));
      // Best effort: a prune that fails now is done by the next one.
      await store.pruneResponses({ accountId: p.accountId, keep }).catch(() => {});
    },
    async get(p, id) {
      const r = await reach(store.getResponse(id, p.accountId));
      return r && r.created >= now() - maxAgeMs ? r : undefined;
    },
    delete: (p, id) => reach(store.deleteResponse(id, p.accountId)),
    async item(p, itemId) {
      // Held by a response past the retention age only: gone, as that response is.
      const found = await reach(store.getResponseItem(itemId, p.accountId));
      return found && found.created >= now() - maxAgeMs ? found.item : undefined;
    },
  };

  async function usageThisMonth(): Promise<AccountUsage[]> {
    const [accounts, totals] = await Promise.all([store.listAccounts(), store.monthTotals(utcMonth(now()))]);
    const byId = new Map(totals.map((t) => [t.account_id, t]));
    const out: AccountUsage[] = accounts.map((a) => {
      const t = byId.get(a.id);
      byId.delete(a.id);
      return {
        account_id: a.id,
        name: a.name,
        sandbox: a.sandbox,
        requests: t?.requests ?? 0,
        prompt_tokens: t?.prompt_tokens ?? 0,
        completion_tokens: t?.completion_tokens ?? 0,
        spend_usd: roundUsd(t?.spend_usd ?? 0),
      };
    });
    // Usage of principals without an account (acceptAnyWellFormedKey).
    for (const t of byId.values()) {
      out.push({ ...t, name: t.account_id, sandbox: false, spend_usd: roundUsd(t.spend_usd) });
    }
    return out.sort((a, b) => a.name.localeCompare(b.name) || a.account_id.localeCompare(b.account_id));
  }

  async function accountFor(opts: CreateKeyOptions): Promise<AccountRow> {
    const name = opts.name ?? 'default';
    const sandbox = opts.sandbox ?? false;
    // One account per name: a second key with the same name joins it.
    const existing = (await store.listAccounts()).find((a) => a.name === name);
    if (existing) {
      if (opts.sandbox !== undefined && existing.sandbox !== sandbox) {
        throw new Error(
          `account "${name}" already exists and is ${existing.sandbox ? '' : 'not '}a sandbox account; choose another name`,
        );
      }
      return existing;
    }
    const account: AccountRow = { id: generateAccountId(), name, sandbox, created: now() };
    await store.createAccount(account);
    return account;
  }

  async function addKey(key: string, opts: CreateKeyOptions = {}): Promise<Omit<CreatedKey, 'key'>> {
    if (!isWellFormedKey(key)) throw new Error(`not a well-formed key (expected "${KEY_PREFIX}" and at least 32 letters and digits)`);
    if (opts.rateLimit !== undefined) positiveInt('rateLimit', opts.rateLimit, 1);
    const account = await accountFor(opts);
    const row: KeyRow = {
      id: generateKeyId(),
      account_id: account.id,
      hash: await hashKey(key),
      name: opts.name ?? 'default',
      admin: opts.admin ?? false,
      created: now(),
    };
    if (opts.rateLimit !== undefined) row.rate_limit = opts.rateLimit;
    await store.createKey(row);
    return { id: row.id, account_id: account.id };
  }

  async function createKey(opts: CreateKeyOptions = {}): Promise<CreatedKey> {
    const key = generateKey();
    return { key, ...(await addKey(key, opts)) };
  }

  async function listKeys(): Promise<KeyInfo[]> {
    const [keys, accounts] = await Promise.all([store.listKeys(), store.listAccounts()]);
    const byId = new Map(accounts.map((a) => [a.id, a]));
    // Stable sort: keys created in the same millisecond keep the store's (creation) order.
    return keys.sort((a, b) => a.created - b.created).map((k) => info(k, byId.get(k.account_id)));
  }

  async function revokeKey(keyOrId: string): Promise<KeyInfo> {
    let row: KeyRow | undefined;
    if (isWellFormedKey(keyOrId)) row = await store.findKeyByHash(await hashKey(keyOrId));
    else if (isKeyId(keyOrId)) row = await store.getKey(keyOrId);
    else throw new Error(`"${keyOrId.startsWith(KEY_PREFIX) ? KEY_PREFIX + '…' : keyOrId}" is neither a key (${KEY_PREFIX}…) nor a key id (key_…)`);
    if (!row) throw new Error(isWellFormedKey(keyOrId) ? 'no such key' : `no key with id ${keyOrId}`);
    const revoked = (await store.revokeKey(row.id, now()))!;
    return info(revoked, await store.getAccount(revoked.account_id));
  }

  async function ensureFirstKey(): Promise<string | null> {
    if ((await store.listKeys()).length > 0) return null;
    return (await createKey({ name: 'default', admin: true })).key;
  }

  return {
    store,
    authenticate,
    admit,
    checkQuota,
    reserve,
    record,
    usageThisMonth,
    createKey,
    addKey,
    listKeys,
    revokeKey,
    ensureFirstKey,
    responses,
    close: async () => {
      clearInterval(sweeper);
      clearInterval(responseSweeper);
      await retries.close();
      await store.close();
    },
  };
}

function info(k: KeyRow, a: AccountRow | undefined): KeyInfo {
  const out: KeyInfo = {
    id: k.id,
    name: k.name,
    account_id: k.account_id,
    account: a?.name ?? k.account_id,
    admin: k.admin,
    sandbox: a?.sandbox ?? false,
    created: new Date(k.created).toISOString(),
    revoked: k.revoked_at !== undefined,
  };
  if (k.rate_limit !== undefined) out.rate_limit = k.rate_limit;
  if (k.revoked_at !== undefined) out.revoked_at = new Date(k.revoked_at).toISOString();
  return out;
}
