// The redis store (Node only, ioredis): several servers behind a load balancer share
// keys, rate limits and spend. Every check-and-change is one Lua script, which redis
// runs atomically, so a limit of 60 admits exactly 60 requests whichever servers they
// reach. Layout, under a prefix (default "hearth:"):
//
//   accounts            hash  account id → AccountRow JSON
//   keys                hash  key id → KeyRow JSON (without revoked_at)
//   keyhash             hash  SHA-256 hex of the key → key id (the key itself is never stored)
//   keyorder            list  key ids in creation order
//   revoked             hash  key id → revoked_at (unix ms); set once
//   usage:YYYY-MM       hash  "<account id>|r|p|c|s" → requests, prompt and completion
//                             tokens, spend (USD) of that account in that UTC month
//   ledger:YYYY-MM      list  one JSON UsageEntry per served request (with request_id)
//   rate:<key id>       zset  the requests counted in the key's sliding window (score: ms)
//   charge:<id>         string a charge already applied (1 h): an append that ioredis
//                             resends after a reconnect is not counted twice
//
// The time of a rate slot or a usage entry is the caller's (createAccess's clock), so an
// injected clock is honoured here as in the other stores.

import { Redis } from 'ioredis';
import type { AccessStore, AccountRow, KeyRow, SlotResult, UsageEntry, UsageTotals } from './store.js';
import { utcMonth } from './store.js';
import { constantTimeEqual, randomBase62 } from './keys.js';

export interface RedisStoreOptions {
  /** Prefix of every redis key (default "hearth:"). Lets tests (or tenants) share a server. */
  prefix?: string;
  /** Milliseconds to wait for the first connection (default 5000). */
  connectTimeoutMs?: number;
  /** Milliseconds to wait for any one reply before failing the call (default 5000): a
   * redis that hangs makes requests fail, not hang. */
  commandTimeoutMs?: number;
}

/** The URL with any user name and password taken out: safe to print. */
export function redactRedisUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    return 'redis://…';
  }
}

const CHARGE_TTL_MS = 3_600_000;

const SCRIPTS = {
  // KEYS: keys, keyhash, accounts, keyorder. ARGV: id, hash, account id, row JSON.
  hearthCreateKey: {
    keys: 4,
    lua: `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return redis.error_reply('ERR key ' .. ARGV[1] .. ' already exists') end
if redis.call('HEXISTS', KEYS[2], ARGV[2]) == 1 then return redis.error_reply('ERR a key with this hash already exists') end
if redis.call('HEXISTS', KEYS[3], ARGV[3]) == 0 then return redis.error_reply('ERR account ' .. ARGV[3] .. ' does not exist') end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[4])
redis.call('HSET', KEYS[2], ARGV[2], ARGV[1])
redis.call('RPUSH', KEYS[4], ARGV[1])
return 1`,
  },
  // KEYS: keyhash, keys, revoked. ARGV: hash. → {row JSON, revoked_at or false} or nil
  hearthFindKey: {
    keys: 3,
    lua: `
local id = redis.call('HGET', KEYS[1], ARGV[1])
if not id then return nil end
local row = redis.call('HGET', KEYS[2], id)
if not row then return nil end
return {row, redis.call('HGET', KEYS[3], id)}`,
  },
  // KEYS: keys, revoked. ARGV: id, at. → {row JSON, revoked_at} or nil
  hearthRevokeKey: {
    keys: 2,
    lua: `
local row = redis.call('HGET', KEYS[1], ARGV[1])
if not row then return nil end
redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[2])
return {row, redis.call('HGET', KEYS[2], ARGV[1])}`,
  },
  // KEYS: usage month hash, ledger month list, charge marker.
  // ARGV: account id, prompt tokens, completion tokens, cost, entry JSON, charge ttl ms.
  hearthAppendUsage: {
    keys: 3,
    lua: `
if not redis.call('SET', KEYS[3], '1', 'NX', 'PX', ARGV[6]) then return 0 end
local a = ARGV[1]
redis.call('HINCRBY', KEYS[1], a .. '|r', 1)
redis.call('HINCRBY', KEYS[1], a .. '|p', ARGV[2])
redis.call('HINCRBY', KEYS[1], a .. '|c', ARGV[3])
redis.call('HINCRBYFLOAT', KEYS[1], a .. '|s', ARGV[4])
redis.call('RPUSH', KEYS[2], ARGV[5])
return 1`,
  },
  // KEYS: the key's window (zset). ARGV: limit, window ms, now ms, unique member.
  // → {allowed 0|1, remaining, reset ms}. Check and count in one atomic step.
  hearthTakeSlot: {
    keys: 1,
    lua: `
local limit = tonumber(ARGV[1])
local win = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - win)
local n = redis.call('ZCARD', KEYS[1])
if n > limit then
  -- a lowered per-key limit leaves extra entries: keep only what the limit needs
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, n - limit - 1)
  n = limit
end
if n < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[4])
  redis.call('PEXPIRE', KEYS[1], win)
  n = n + 1
  local oldest = tonumber(redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2])
  return {1, limit - n, math.max(0, oldest + win - now)}
end
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2]
local oldest = first and tonumber(first) or now
return {0, 0, math.max(1, oldest + win - now)}`,
  },
} as const;

type ScriptName = keyof typeof SCRIPTS;

export class RedisStore implements AccessStore {
  readonly kind = 'redis';
  private closed = false;
  private readonly p: string;

  private constructor(
    private readonly client: Redis,
    prefix: string,
  ) {
    this.p = prefix;
    for (const [name, s] of Object.entries(SCRIPTS)) client.defineCommand(name, { numberOfKeys: s.keys, lua: s.lua });
  }

  /** Connects (failing fast, with the password kept out of the message) and loads the scripts. */
  static async open(url: string, opts: RedisStoreOptions = {}): Promise<RedisStore> {
    const shown = redactRedisUrl(url);
    const client = new Redis(url, {
      lazyConnect: true,
      connectTimeout: opts.connectTimeoutMs ?? 5000,
      commandTimeout: opts.commandTimeoutMs ?? 5000,
      maxRetriesPerRequest: 3,
      // Reconnect with a short back-off once running; a lost connection fails requests
      // (maxRetriesPerRequest) rather than letting them pile up.
      retryStrategy: (times) => Math.min(times * 100, 2000),
    });
    let lastError = '';
    let opened = false;
    client.on('error', (err: Error) => {
      // Without a listener ioredis prints "Unhandled error event" on every retry; once
      // running, say it once per cause (the URL shown without its password).
      const msg = err?.message ?? String(err);
      if (opened && msg !== lastError) console.error(`hearth: redis (${shown}): ${msg}`);
      lastError = msg;
    });
    client.on('ready', () => (lastError = ''));
    try {
      await client.connect();
      await client.ping();
      opened = true;
    } catch (err) {
      client.disconnect();
      // connect() fails with "Connection is closed."; the cause is the last 'error' event's.
      throw new Error(`cannot use the redis store at ${shown}: ${lastError || ((err as Error)?.message ?? err)}`);
    }
    return new RedisStore(client, opts.prefix ?? 'hearth:');
  }

  private live(): void {
    if (this.closed) throw new Error('the redis access store is closed');
  }

  private k(name: string): string {
    return this.p + name;
  }

  private run(name: ScriptName, keys: string[], args: (string | number)[]): Promise<unknown> {
    const fn = (this.client as unknown as Record<string, (...a: (string | number)[]) => Promise<unknown>>)[name]!;
    return fn.call(this.client, ...keys, ...args);
  }

  async createAccount(account: AccountRow): Promise<void> {
    this.live();
    if (!account.id || typeof account.name !== 'string') throw new Error('account needs an id and a name');
    const ok = await this.client.hsetnx(this.k('accounts'), account.id, JSON.stringify(clean(account)));
    if (ok === 0) throw new Error(`account ${account.id} already exists`);
  }

  async getAccount(id: string): Promise<AccountRow | undefined> {
    this.live();
    const raw = await this.client.hget(this.k('accounts'), id);
    return raw ? (JSON.parse(raw) as AccountRow) : undefined;
  }

  async listAccounts(): Promise<AccountRow[]> {
    this.live();
    const all = await this.client.hvals(this.k('accounts'));
    return all.map((raw) => JSON.parse(raw) as AccountRow).sort((a, b) => a.created - b.created);
  }

  async createKey(key: KeyRow): Promise<void> {
    this.live();
    if (!key.id || !/^[0-9a-f]{64}$/.test(key.hash)) throw new Error('key needs an id and a SHA-256 hex hash');
    const { revoked_at: _r, ...row } = clean(key);
    try {
      await this.run(
        'hearthCreateKey',
        [this.k('keys'), this.k('keyhash'), this.k('accounts'), this.k('keyorder')],
        [key.id, key.hash, key.account_id, JSON.stringify(row)],
      );
    } catch (err) {
      throw new Error(String((err as Error).message ?? err).replace(/^ERR\s+/, ''));
    }
    if (key.revoked_at !== undefined) await this.revokeKey(key.id, key.revoked_at);
  }

  async getKey(id: string): Promise<KeyRow | undefined> {
    this.live();
    const [raw, revoked] = await Promise.all([this.client.hget(this.k('keys'), id), this.client.hget(this.k('revoked'), id)]);
    return raw ? keyRow(raw, revoked) : undefined;
  }

  async findKeyByHash(hash: string): Promise<KeyRow | undefined> {
    this.live();
    const r = (await this.run('hearthFindKey', [this.k('keyhash'), this.k('keys'), this.k('revoked')], [hash])) as
      | [string, string | null]
      | null;
    if (!r) return undefined;
    const row = keyRow(r[0], r[1]);
    return constantTimeEqual(row.hash, hash) ? row : undefined;
  }

  async listKeys(): Promise<KeyRow[]> {
    this.live();
    const ids = await this.client.lrange(this.k('keyorder'), 0, -1);
    if (!ids.length) return [];
    const [rows, revoked] = await Promise.all([
      this.client.hmget(this.k('keys'), ...ids),
      this.client.hmget(this.k('revoked'), ...ids),
    ]);
    const out: KeyRow[] = [];
    rows.forEach((raw, i) => raw && out.push(keyRow(raw, revoked[i] ?? null)));
    return out;
  }

  async revokeKey(id: string, at: number): Promise<KeyRow | undefined> {
    this.live();
    const r = (await this.run('hearthRevokeKey', [this.k('keys'), this.k('revoked')], [id, at])) as [string, string | null] | null;
    return r ? keyRow(r[0], r[1]) : undefined;
  }

  async appendUsage(entry: UsageEntry): Promise<void> {
    this.live();
    for (const f of ['ts', 'prompt_tokens', 'completion_tokens', 'cost_usd'] as const) {
      if (typeof entry[f] !== 'number' || !Number.isFinite(entry[f]) || entry[f] < 0) {
        throw new Error(`usage entry: ${f} must be a finite number ≥ 0`);
      }
    }
    const month = utcMonth(entry.ts);
    // A fresh id per call: a resend of this very command (ioredis does that after a
    // reconnect) finds its marker and changes nothing.
    const charge = randomBase62(20);
    await this.run(
      'hearthAppendUsage',
      [this.k(`usage:${month}`), this.k(`ledger:${month}`), this.k(`charge:${charge}`)],
      [
        entry.account_id,
        Math.round(entry.prompt_tokens),
        Math.round(entry.completion_tokens),
        // Redis parses exponent notation; 17 significant digits round-trip a double.
        entry.cost_usd.toPrecision(17),
        JSON.stringify(clean(entry)),
        CHARGE_TTL_MS,
      ],
    );
  }

  async monthTotals(month: string): Promise<UsageTotals[]> {
    this.live();
    const h = await this.client.hgetall(this.k(`usage:${month}`));
    const by = new Map<string, UsageTotals>();
    for (const [field, value] of Object.entries(h)) {
      const bar = field.lastIndexOf('|');
      if (bar < 0) continue;
      const id = field.slice(0, bar);
      let t = by.get(id);
      if (!t) by.set(id, (t = zero(id)));
      addField(t, field.slice(bar + 1), value);
    }
    return [...by.values()];
  }

  async accountMonthTotals(accountId: string, month: string): Promise<UsageTotals> {
    this.live();
    const fields = ['r', 'p', 'c', 's'];
    const values = await this.client.hmget(this.k(`usage:${month}`), ...fields.map((f) => `${accountId}|${f}`));
    const t = zero(accountId);
    values.forEach((v, i) => v != null && addField(t, fields[i]!, v));
    return t;
  }

  /** The ledger lines of a month, oldest first (for audits and tests). */
  async ledger(month: string): Promise<UsageEntry[]> {
    this.live();
    return (await this.client.lrange(this.k(`ledger:${month}`), 0, -1)).map((raw) => JSON.parse(raw) as UsageEntry);
  }

  async takeSlot(keyId: string, limit: number, windowMs: number, now: number): Promise<SlotResult> {
    this.live();
    const member = `${now}:${randomBase62(12)}`;
    const r = (await this.run('hearthTakeSlot', [this.k(`rate:${keyId}`)], [limit, windowMs, now, member])) as [number, number, number];
    return { allowed: r[0] === 1, limit, remaining: Number(r[1]), resetMs: Number(r[2]) };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      await this.client.quit();
    } catch {
      this.client.disconnect();
    }
  }
}

export function openRedisStore(url: string, opts: RedisStoreOptions = {}): Promise<RedisStore> {
  return RedisStore.open(url, opts);
}

function keyRow(raw: string, revoked: string | null | undefined): KeyRow {
  const row = JSON.parse(raw) as KeyRow;
  if (revoked != null) row.revoked_at = Number(revoked);
  return row;
}

function zero(account_id: string): UsageTotals {
  return { account_id, requests: 0, prompt_tokens: 0, completion_tokens: 0, spend_usd: 0 };
}

function addField(t: UsageTotals, f: string, v: string): void {
  const n = Number(v);
  if (f === 'r') t.requests = n;
  else if (f === 'p') t.prompt_tokens = n;
  else if (f === 'c') t.completion_tokens = n;
  else if (f === 's') t.spend_usd = n;
}

/** Drops undefined fields so rows compare and serialise the same everywhere. */
function clean<T extends object>(row: T): T {
  const out = {} as T;
  for (const [k, v] of Object.entries(row)) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  return out;
}
