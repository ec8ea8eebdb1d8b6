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
//   charge:<id>         string a charge (or a hold, by its id) already settled (1 h): an
//                             append that is resent after a reconnect or retried after a
//                             timed-out reply is not counted twice
//   resv:<account id>   zset  the account's holds on its cap (score: expiry, unix ms)
//   resvamt:<account id> hash hold id → amount held (USD)
//   deliv               hash  hold id → what its stream has delivered so far (JSON: the
//                             charge, the lease's end, the holder's host, pid and process id)
//   resp:<response id>  string a stored response (JSON StoredResponse)
//   resps:<account id>  zset  the account's stored responses (score: created, unix ms):
//                             its ownership, and the order retention deletes in
//   resps               zset  "<account id> <response id>" of every account (score: created),
//                             for the sweep by age
//   ritem:<account id>:<item id>  zset  the account's responses holding that item (input or
//                             output; score: created): the item index of item_reference
//   respitems:<account id>:<response id>  set  the ids of the items that response holds,
//                             so that deleting or pruning it takes it out of the index
//
// reserve, renew and settle are one script each: the check of spend + holds against the
// cap and the hold itself cannot interleave with another server's. Expired holds (their
// server died or froze) are dropped by the next reserve of the account. A hold with a
// delivery whose server died is settled to it by settleOrphans: at once by a server (or
// the CLI) opening the store on the dead one's machine, by any server once its lease ran
// out. Settling is once per hold id, so a sweep racing the holder charges once.
//
// The time of a rate slot or a usage entry is the caller's (createAccess's clock), so an
// injected clock is honoured here as in the other stores.

import { Redis } from 'ioredis';
import type { AccessStore, AccountRow, Delivery, KeyRow, Reservation, ReserveResult, ResponsePrune, SlotResult, StoredItem, StoredResponse, UsageEntry, UsageTotals } from './store.js';
import { checkReservation, checkStoredResponse, checkUsage, responseItems, STORABLE_ID, utcMonth } from './store.js';
import { constantTimeEqual, randomBase62 } from './keys.js';
import { holderGone, thisHolder } from './holder.js';

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

/** Lua: takes a response's items out of the item index (the response id from each item's
 * holders, the item's key once none is left, then the response's own list). */
const DROP_ITEMS = `
local function dropItems(prefix, acct, id)
  local held = prefix .. 'respitems:' .. acct .. ':' .. id
  for _, item in ipairs(redis.call('SMEMBERS', held)) do
    redis.call('ZREM', prefix .. 'ritem:' .. acct .. ':' .. item, id)
  end
  redis.call('DEL', held)
end`;

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
  // KEYS: usage month hash, ledger month list, charge marker, holds zset, hold amounts,
  // deliveries. ARGV: account id, prompt tokens, completion tokens, cost, entry JSON ('' =
  // end uncharged), charge ttl ms, hold id. Ends the hold and charges once per hold id; the
  // marker keeps what was charged so that ending it uncharged later can undo it.
  hearthSettle: {
    keys: 6,
    lua: `
redis.call('ZREM', KEYS[4], ARGV[7])
redis.call('HDEL', KEYS[5], ARGV[7])
redis.call('HDEL', KEYS[6], ARGV[7])
local m = redis.call('GET', KEYS[3])
if ARGV[5] == '' then
  if m and m ~= 'r' then
    local x = cjson.decode(m)
    redis.call('HINCRBY', x.u, x.a .. '|r', -1)
    redis.call('HINCRBY', x.u, x.a .. '|p', -tonumber(x.p))
    redis.call('HINCRBY', x.u, x.a .. '|c', -tonumber(x.c))
    redis.call('HINCRBYFLOAT', x.u, x.a .. '|s', '-' .. x.s)
    redis.call('LREM', x.l, -1, x.e)
  end
  redis.call('SET', KEYS[3], 'r', 'PX', ARGV[6])
  return 1
end
if m then return 0 end
redis.call('SET', KEYS[3], cjson.encode({u = KEYS[1], l = KEYS[2], a = ARGV[1], p = ARGV[2], c = ARGV[3], s = ARGV[4], e = ARGV[5]}), 'PX', ARGV[6])
local a = ARGV[1]
redis.call('HINCRBY', KEYS[1], a .. '|r', 1)
redis.call('HINCRBY', KEYS[1], a .. '|p', ARGV[2])
redis.call('HINCRBY', KEYS[1], a .. '|c', ARGV[3])
redis.call('HINCRBYFLOAT', KEYS[1], a .. '|s', ARGV[4])
redis.call('RPUSH', KEYS[2], ARGV[5])
return 1`,
  },
  // KEYS: usage month hash, holds zset, hold amounts, the hold's charge marker.
  // ARGV: account id, hold id, amount, cap, now ms, expires ms.
  // → {ok 0|1, spent, held by others} (numbers as strings: Lua would truncate them).
  hearthReserve: {
    keys: 4,
    lua: `
local now = tonumber(ARGV[5])
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)) do redis.call('HDEL', KEYS[3], id) end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local held = 0
for _, v in ipairs(redis.call('HVALS', KEYS[3])) do held = held + tonumber(v) end
local spent = tonumber(redis.call('HGET', KEYS[1], ARGV[1] .. '|s') or '0')
local mine = redis.call('HGET', KEYS[3], ARGV[2])
if mine then return {1, tostring(spent), tostring(held - tonumber(mine))} end
if redis.call('EXISTS', KEYS[4]) == 1 then return {0, tostring(spent), tostring(held)} end
if spent + held + tonumber(ARGV[3]) > tonumber(ARGV[4]) + 1e-12 then return {0, tostring(spent), tostring(held)} end
redis.call('ZADD', KEYS[2], ARGV[6], ARGV[2])
redis.call('HSET', KEYS[3], ARGV[2], ARGV[3])
local last = tonumber(redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')[2])
local ttl = math.max(1000, math.ceil(last - now) + 1000)
redis.call('PEXPIRE', KEYS[2], ttl)
redis.call('PEXPIRE', KEYS[3], ttl)
return {1, tostring(spent), tostring(held)}`,
  },
  // KEYS: holds zset, hold amounts. ARGV: hold id, amount, expires ms, now ms. → 1 | 0 (not held)
  hearthRenew: {
    keys: 2,
    lua: `
local cur = redis.call('HGET', KEYS[2], ARGV[1])
if not cur then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
if tonumber(ARGV[2]) < tonumber(cur) then redis.call('HSET', KEYS[2], ARGV[1], ARGV[2]) end
local last = tonumber(redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')[2])
local ttl = math.max(1000, math.ceil(last - tonumber(ARGV[4])) + 1000)
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('PEXPIRE', KEYS[2], ttl)
return 1`,
  },
  // KEYS: deliveries, the hold's charge marker. ARGV: hold id, delivery JSON.
  // → 1, or 0 when the hold is settled already (its delivery must not outlive it).
  hearthDeliver: {
    keys: 2,
    lua: `
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
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
  // KEYS: the response, the account's responses, every account's. ARGV: id, JSON, created ms,
  // account id, key prefix, then the ids of the items it holds (indexed in place of any it held before).
  hearthPutResponse: {
    keys: 3,
    lua: `${DROP_ITEMS}
redis.call('SET', KEYS[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[4] .. ' ' .. ARGV[1])
dropItems(ARGV[5], ARGV[4], ARGV[1])
local held = ARGV[5] .. 'respitems:' .. ARGV[4] .. ':' .. ARGV[1]
for i = 6, #ARGV do
  redis.call('ZADD', ARGV[5] .. 'ritem:' .. ARGV[4] .. ':' .. ARGV[i], ARGV[3], ARGV[1])
  redis.call('SADD', held, ARGV[i])
end
return 1`,
  },
  // KEYS: the response, the account's responses, every account's. ARGV: id, account id, key prefix.
  // → 1, or 0 when the account has no response by that id (another's stays).
  hearthDeleteResponse: {
    keys: 3,
    lua: `${DROP_ITEMS}
if not redis.call('ZSCORE', KEYS[2], ARGV[1]) then return 0 end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[2] .. ' ' .. ARGV[1])
redis.call('DEL', KEYS[1])
dropItems(ARGV[3], ARGV[2], ARGV[1])
return 1`,
  },
  // KEYS: the account's responses, every account's. ARGV: before ms ('' none), keep ('' none),
  // account id, key prefix. → how many went: those created before, then the oldest past keep.
  hearthPruneAccount: {
    keys: 2,
    lua: `${DROP_ITEMS}
local gone = {}
if ARGV[1] ~= '' then
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[1])) do table.insert(gone, id) end
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[1])
end
if ARGV[2] ~= '' then
  local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[2])
  if over > 0 then
    for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, over - 1)) do table.insert(gone, id) end
    redis.call('ZREMRANGEBYRANK', KEYS[1], 0, over - 1)
  end
end
for _, id in ipairs(gone) do
  redis.call('ZREM', KEYS[2], ARGV[3] .. ' ' .. id)
  redis.call('DEL', ARGV[4] .. 'resp:' .. id)
  dropItems(ARGV[4], ARGV[3], id)
end
return #gone`,
  },
  // KEYS: every account's responses. ARGV: before ms, key prefix. → how many went.
  hearthPruneAll: {
    keys: 1,
    lua: `${DROP_ITEMS}
local gone = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[1])
for _, m in ipairs(gone) do
  local sp = string.find(m, ' ', 1, true)
  local acct, id = string.sub(m, 1, sp - 1), string.sub(m, sp + 1)
  redis.call('ZREM', ARGV[2] .. 'resps:' .. acct, id)
  redis.call('DEL', ARGV[2] .. 'resp:' .. id)
  dropItems(ARGV[2], acct, id)
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[1])
return #gone`,
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
    const store = new RedisStore(client, opts.prefix ?? 'hearth:');
    // A restart on the machine of a server that died settles its streams' holds now.
    await store.settleOrphans(Date.now()).catch(() => undefined);
    return store;
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
    // A fresh id per call: a resend of this very command (ioredis does that after a
    // reconnect) finds its marker and changes nothing.
    await this.settle({ id: `charge_${randomBase62(20)}`, account_id: entry.account_id }, entry);
  }

  async reserve(r: Reservation, capUsd: number, month: string, now: number): Promise<ReserveResult> {
    this.live();
    checkReservation(r);
    const a = r.account_id;
    const out = (await this.run(
      'hearthReserve',
      [this.k(`usage:${month}`), this.k(`resv:${a}`), this.k(`resvamt:${a}`), this.k(`charge:${r.id}`)],
      [a, r.id, usd(r.amount_usd), usd(capUsd), now, r.expires],
    )) as [number, string, string];
    return { ok: out[0] === 1, spent_usd: Number(out[1]), held_usd: Number(out[2]) };
  }

  async renewReservation(id: string, accountId: string, amountUsd: number, expires: number): Promise<boolean> {
    this.live();
    const r = await this.run('hearthRenew', [this.k(`resv:${accountId}`), this.k(`resvamt:${accountId}`)], [id, usd(amountUsd), expires, Date.now()]);
    return r === 1;
  }

  async settle(reservation: { id: string; account_id: string }, entry?: UsageEntry): Promise<void> {
    this.live();
    if (entry) checkUsage(entry);
    const month = utcMonth(entry?.ts ?? Date.now());
    const a = reservation.account_id;
    await this.run(
      'hearthSettle',
      [this.k(`usage:${month}`), this.k(`ledger:${month}`), this.k(`charge:${reservation.id}`), this.k(`resv:${a}`), this.k(`resvamt:${a}`), this.k('deliv')],
      [
        entry?.account_id ?? a,
        Math.round(entry?.prompt_tokens ?? 0),
        Math.round(entry?.completion_tokens ?? 0),
        usd(entry?.cost_usd ?? 0),
        entry ? JSON.stringify(clean(entry)) : '',
        CHARGE_TTL_MS,
        reservation.id,
      ],
    );
  }

  async recordDelivery(d: Delivery): Promise<void> {
    this.live();
    checkUsage(d.entry);
    const { host, pid, proc } = thisHolder();
    const row: StoredDelivery = { a: d.account_id, x: d.expires, e: clean(d.entry), h: host, p: pid, i: proc };
    await this.run('hearthDeliver', [this.k('deliv'), this.k(`charge:${d.id}`)], [d.id, JSON.stringify(row)]);
  }

  async settleOrphans(now: number): Promise<number> {
    this.live();
    let settled = 0;
    for (const [id, raw] of Object.entries(await this.client.hgetall(this.k('deliv')))) {
      let d: StoredDelivery;
      try {
        d = JSON.parse(raw) as StoredDelivery;
      } catch {
        continue;
      }
      if (d.x > now && !holderGone({ host: d.h, pid: d.p, proc: d.i })) continue;
      await this.settle({ id, account_id: d.a }, d.e);
      settled++;
    }
    return settled;
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

  async putResponse(r: StoredResponse): Promise<void> {
    this.live();
    checkStoredResponse(r);
    await this.run(
      'hearthPutResponse',
      [this.k(`resp:${r.id}`), this.k(`resps:${r.account_id}`), this.k('resps')],
      [r.id, JSON.stringify(r), r.created, r.account_id, this.p, ...responseItems(r).keys()],
    );
  }

  async getResponse(id: string, accountId: string): Promise<StoredResponse | undefined> {
    this.live();
    if (!STORABLE_ID.test(id)) return undefined;
    const raw = await this.client.get(this.k(`resp:${id}`));
    const r = raw ? (JSON.parse(raw) as StoredResponse) : undefined;
    return r?.account_id === accountId ? r : undefined;
  }

  async deleteResponse(id: string, accountId: string): Promise<boolean> {
    this.live();
    if (!STORABLE_ID.test(id)) return false;
    const r = await this.run('hearthDeleteResponse', [this.k(`resp:${id}`), this.k(`resps:${accountId}`), this.k('resps')], [id, accountId, this.p]);
    return r === 1;
  }

  async getResponseItem(itemId: string, accountId: string): Promise<StoredItem | undefined> {
    this.live();
    if (!STORABLE_ID.test(itemId) || !STORABLE_ID.test(accountId)) return undefined;
    // The newest holder first; a holder answers with the item unless it was replaced meanwhile.
    for (const id of await this.client.zrevrange(this.k(`ritem:${accountId}:${itemId}`), 0, 4)) {
      const r = await this.getResponse(id, accountId);
      const item = r && responseItems(r).get(itemId);
      if (item) return { item, response_id: r.id, created: r.created };
    }
    return undefined;
  }

  async pruneResponses(p: ResponsePrune): Promise<number> {
    this.live();
    if (p.accountId === undefined) {
      if (p.before === undefined) return 0;
      return Number(await this.run('hearthPruneAll', [this.k('resps')], [p.before, this.p]));
    }
    const args = [p.before ?? '', p.keep ?? '', p.accountId, this.p];
    return Number(await this.run('hearthPruneAccount', [this.k(`resps:${p.accountId}`), this.k('resps')], args));
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

/** A delivery as kept in redis: account, lease end, charge, holder (host, pid, process id). */
interface StoredDelivery {
  a: string;
  x: number;
  e: UsageEntry;
  h: string;
  p: number;
  i: string;
}

/** Redis parses exponent notation; 17 significant digits round-trip a double. */
function usd(x: number): string {
  return x.toPrecision(17);
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
