import { describe, expect, it } from 'vitest';
import { AccessError, type Principal } from '../../src/access/types.js';
import { createAccess, type HearthAccess } from '../../src/access/access.js';
import { createMemoryStore } from '../../src/access/memory-store.js';
import { openFileStore } from '../../src/access/file-store.js';
import { generateKey } from '../../src/access/keys.js';
import { tempDir } from './helpers.js';

async function refusal(p: Promise<unknown>): Promise<AccessError> {
  const err = await p.then(
    () => {
      throw new Error('expected an AccessError');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AccessError);
  return err as AccessError;
}

function memoryAccess(opts: Partial<Parameters<typeof createAccess>[0]> = {}): HearthAccess {
  return createAccess({ store: createMemoryStore(), ...opts });
}

describe('authenticate', () => {
  it('accepts a created key and describes its principal', async () => {
    const access = memoryAccess();
    const { key, id, account_id } = await access.createKey({ name: 'alice', sandbox: true, rateLimit: 5 });
    const p = await access.authenticate(`Bearer ${key}`);
    expect(p).toEqual({ keyId: id, accountId: account_id, accountName: 'alice', admin: false, sandbox: true, rateLimit: 5 });
    // The scheme is case-insensitive, as in RFC 7235.
    expect((await access.authenticate(`bearer ${key}`)).keyId).toBe(id);
  });

  const secretLike = 'svc_live_' + 'Q'.repeat(40);
  it.each([
    ['missing header', null],
    ['empty header', ''],
    ['not Bearer', `Basic ${secretLike}`],
    ['Bearer without a key', 'Bearer '],
    ['not starting svc_live_', 'Bearer sk-' + 'Q'.repeat(48)],
    ['too short', 'Bearer svc_live_' + 'Q'.repeat(20)],
    ['bad characters', 'Bearer svc_live_' + 'Q'.repeat(38) + '-_'],
    ['unknown', `Bearer ${secretLike}`],
  ])('refuses %s with 401 invalid_api_key, never echoing the key', async (_label, header) => {
    const access = memoryAccess();
    await access.createKey();
    const err = await refusal(access.authenticate(header));
    expect(err.status).toBe(401);
    expect(err.type).toBe('invalid_request_error');
    expect(err.code).toBe('invalid_api_key');
    expect(err.message).not.toContain('QQQQ');
    expect(err.message.length).toBeGreaterThan(10);
  });

  it('refuses a revoked key (by key or by id)', async () => {
    const access = memoryAccess();
    const a = await access.createKey({ name: 'a' });
    const b = await access.createKey({ name: 'b' });
    await access.revokeKey(a.key);
    await access.revokeKey(b.id);
    for (const k of [a.key, b.key]) {
      const err = await refusal(access.authenticate(`Bearer ${k}`));
      expect(err.status).toBe(401);
      expect(err.code).toBe('invalid_api_key');
      expect(err.message).toMatch(/revoked/);
      expect(err.message).not.toContain(k);
    }
  });

  it('sees a revocation made by another process on the same file store', async () => {
    const dir = tempDir();
    const server = createAccess({ store: openFileStore(dir) });
    const { key, id } = await server.createKey({ name: 'svc' });
    expect((await server.authenticate(`Bearer ${key}`)).keyId).toBe(id);
    // The CLI: a separate store instance (as in another process) on the same data dir.
    const cli = createAccess({ store: openFileStore(dir) });
    expect((await cli.revokeKey(key)).revoked).toBe(true);
    await cli.close();
    expect((await refusal(server.authenticate(`Bearer ${key}`))).status).toBe(401);
    // And a key the CLI creates is accepted by the running server at once.
    const cli2 = createAccess({ store: openFileStore(dir) });
    const fresh = await cli2.createKey({ name: 'later' });
    await cli2.close();
    expect((await server.authenticate(`Bearer ${fresh.key}`)).keyId).toBe(fresh.id);
    await server.close();
  });

  it('acceptAnyWellFormedKey: any well-formed key is a synthetic principal; the rest still get 401', async () => {
    const access = memoryAccess({ acceptAnyWellFormedKey: true });
    const k1 = generateKey();
    const p1 = await access.authenticate(`Bearer ${k1}`);
    expect(p1).toMatchObject({ admin: false, sandbox: false });
    expect(p1.keyId).toMatch(/^key_/);
    expect(await access.authenticate(`Bearer ${k1}`)).toEqual(p1); // stable per key
    expect((await access.authenticate(`Bearer ${generateKey()}`)).keyId).not.toBe(p1.keyId);
    expect((await refusal(access.authenticate('Bearer sk-abc'))).status).toBe(401);
    expect((await refusal(access.authenticate(null))).status).toBe(401);
    // A known key that was revoked stays refused.
    const { key } = await access.createKey();
    await access.revokeKey(key);
    expect((await refusal(access.authenticate(`Bearer ${key}`))).status).toBe(401);
    // Synthetic principals are rate limited and recorded like any other.
    await access.admit(p1);
    await access.record(p1, { model: 'm', prompt_tokens: 1, completion_tokens: 1, cost_usd: 0.01 });
    expect((await access.usageThisMonth()).find((u) => u.account_id === p1.accountId)?.requests).toBe(1);
  });

  it('addKey registers a caller-chosen key', async () => {
    const access = memoryAccess();
    const k = 'svc_live_' + 'x'.repeat(32);
    const { id } = await access.addKey(k, { name: 'msw' });
    expect((await access.authenticate(`Bearer ${k}`)).keyId).toBe(id);
    await expect(access.addKey('sk-nope')).rejects.toThrow();
  });
});

describe('admit', () => {
  const principal = (over: Partial<Principal> = {}): Principal => ({
    keyId: 'key_test',
    accountId: 'acct_test',
    accountName: 'test',
    admin: false,
    sandbox: false,
    ...over,
  });

  it('admits exactly the limit out of 100 concurrent requests', async () => {
    let t = 1_000_000;
    const access = memoryAccess({ now: () => t });
    const p = principal();
    const results = await Promise.allSettled(Array.from({ length: 100 }, () => access.admit(p)));
    const ok = results.filter((r) => r.status === 'fulfilled');
    expect(ok).toHaveLength(60);
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason as AccessError);
    expect(refused).toHaveLength(40);
    const e = refused[0]!;
    expect(e).toBeInstanceOf(AccessError);
    expect([e.status, e.type, e.code]).toEqual([429, 'requests', 'rate_limit_exceeded']);
    expect(e.headers).toEqual({
      'retry-after': '60',
      'x-ratelimit-limit-requests': '60',
      'x-ratelimit-remaining-requests': '0',
      'x-ratelimit-reset-requests': '1m0s',
    });
    t += 30_000;
    expect((await refusal(access.admit(p))).headers['x-ratelimit-reset-requests']).toBe('30s');
    t += 29_999;
    const almost = await refusal(access.admit(p));
    expect(almost.headers['retry-after']).toBe('1'); // never 0
    expect(almost.headers['x-ratelimit-reset-requests']).toBe('1ms');
    t += 1;
    expect(await access.admit(p)).toMatchObject({ limit: 60, remaining: 59 });
  });

  it('reports the remaining requests and the reset on success', async () => {
    let t = 0;
    const access = memoryAccess({ rateLimit: 3, now: () => t });
    const p = principal();
    expect(await access.admit(p)).toEqual({ limit: 3, remaining: 2, resetMs: 60_000 });
    t = 15_000;
    expect(await access.admit(p)).toEqual({ limit: 3, remaining: 1, resetMs: 45_000 });
    t = 16_000;
    expect(await access.admit(p)).toEqual({ limit: 3, remaining: 0, resetMs: 44_000 });
    expect((await refusal(access.admit(p))).headers).toMatchObject({ 'retry-after': '44', 'x-ratelimit-reset-requests': '44s' });
  });

  it('uses the per-key limit over the deployment default, and counts keys separately', async () => {
    const access = memoryAccess({ rateLimit: 100 });
    const { key } = await access.createKey({ rateLimit: 2 });
    const p = await access.authenticate(`Bearer ${key}`);
    await access.admit(p);
    await access.admit(p);
    const err = await refusal(access.admit(p));
    expect(err.headers['x-ratelimit-limit-requests']).toBe('2');
    expect((await access.admit(principal({ keyId: 'key_other' }))).limit).toBe(100);
  });
});

describe('checkQuota and record', () => {
  it('caps sandbox accounts per UTC calendar month, and resets at the month boundary', async () => {
    let t = Date.UTC(2026, 0, 31, 23, 0, 0); // 2026-01-31T23:00Z
    const access = memoryAccess({ sandboxCapUsd: 1, now: () => t });
    const { key } = await access.createKey({ name: 'sb', sandbox: true });
    const p = await access.authenticate(`Bearer ${key}`);
    await access.checkQuota(p);
    await access.record(p, { model: 'svc/tiny-chat', prompt_tokens: 100, completion_tokens: 50, cost_usd: 0.6 });
    await access.checkQuota(p); // 0.6 < 1
    await access.record(p, { model: 'svc/tiny-chat', prompt_tokens: 100, completion_tokens: 50, cost_usd: 0.4 });
    const err = await refusal(access.checkQuota(p)); // 1.0 ≥ 1
    expect([err.status, err.type, err.code]).toEqual([429, 'insufficient_quota', 'insufficient_quota']);
    expect(err.message).toMatch(/^You exceeded your current quota/);
    expect(err.headers).toEqual({ 'x-should-retry': 'false' });
    t = Date.UTC(2026, 0, 31, 23, 59, 59, 999);
    await expect(access.checkQuota(p)).rejects.toBeInstanceOf(AccessError);
    t = Date.UTC(2026, 1, 1, 0, 0, 0); // February: a new month, a new budget
    await access.checkQuota(p);
    expect((await access.usageThisMonth()).find((u) => u.name === 'sb')?.spend_usd).toBe(0);
  });

  it('never caps non-sandbox accounts', async () => {
    const access = memoryAccess({ sandboxCapUsd: 0 });
    const { key } = await access.createKey({ name: 'paid' });
    const p = await access.authenticate(`Bearer ${key}`);
    await access.record(p, { model: 'm', prompt_tokens: 1, completion_tokens: 1, cost_usd: 1000 });
    await access.checkQuota(p);
  });

  it('a cap of 0 refuses sandbox accounts from the start', async () => {
    const access = memoryAccess({ sandboxCapUsd: 0 });
    const { key } = await access.createKey({ sandbox: true });
    const p = await access.authenticate(`Bearer ${key}`);
    expect((await refusal(access.checkQuota(p))).code).toBe('insufficient_quota');
  });

  it('usageThisMonth sums per account, listing accounts without usage too', async () => {
    const t = Date.UTC(2026, 10, 21);
    const access = memoryAccess({ now: () => t });
    const a = await access.authenticate(`Bearer ${(await access.createKey({ name: 'alice', sandbox: true })).key}`);
    const a2 = await access.authenticate(`Bearer ${(await access.createKey({ name: 'alice' })).key}`); // same account
    await access.createKey({ name: 'bob' });
    expect(a2.accountId).toBe(a.accountId);
    for (let i = 0; i < 3; i++) await access.record(a, { model: 'svc/tiny-chat', prompt_tokens: 10, completion_tokens: 20, cost_usd: 0.1 });
    await access.record(a2, { model: 'svc/tiny-embed', prompt_tokens: 7, completion_tokens: 0, cost_usd: 0.2 });
    const rows = await access.usageThisMonth();
    expect(rows.map(({ account_id: _, ...r }) => r)).toEqual([
      { name: 'alice', sandbox: true, requests: 4, prompt_tokens: 37, completion_tokens: 60, spend_usd: 0.5 },
      { name: 'bob', sandbox: false, requests: 0, prompt_tokens: 0, completion_tokens: 0, spend_usd: 0 },
    ]);
  });
});

describe('keys management', () => {
  it('lists keys without the secret, revokes by key or id, refuses unknown ones', async () => {
    const access = memoryAccess();
    const a = await access.createKey({ name: 'alice', admin: true, rateLimit: 10 });
    const b = await access.createKey({ name: 'bob', sandbox: true });
    const list = await access.listKeys();
    expect(list).toHaveLength(2);
    expect(JSON.stringify(list)).not.toContain(a.key);
    expect(JSON.stringify(list)).not.toContain(b.key);
    expect(list[0]).toMatchObject({ id: a.id, name: 'alice', account: 'alice', admin: true, sandbox: false, rate_limit: 10, revoked: false });
    expect(list[1]).toMatchObject({ id: b.id, name: 'bob', account: 'bob', admin: false, sandbox: true, revoked: false });
    expect(await access.revokeKey(b.id)).toMatchObject({ id: b.id, revoked: true });
    expect(await access.revokeKey(b.key)).toMatchObject({ id: b.id, revoked: true }); // idempotent
    await expect(access.revokeKey('key_doesnotexist')).rejects.toThrow(/no key/);
    await expect(access.revokeKey(generateKey())).rejects.toThrow(/no such key/);
    await expect(access.revokeKey('whatever')).rejects.toThrow();
  });

  it('refuses to put a sandbox key into an existing non-sandbox account of the same name', async () => {
    const access = memoryAccess();
    await access.createKey({ name: 'x' });
    await expect(access.createKey({ name: 'x', sandbox: true })).rejects.toThrow(/sandbox/);
  });

  it('ensureFirstKey creates an admin key only when there are no keys at all', async () => {
    const access = memoryAccess();
    const first = await access.ensureFirstKey();
    expect(first).toMatch(/^svc_live_[0-9A-Za-z]{40}$/);
    expect((await access.authenticate(`Bearer ${first}`)).admin).toBe(true);
    expect(await access.ensureFirstKey()).toBeNull();
    await access.revokeKey(first!);
    expect(await access.ensureFirstKey()).toBeNull(); // a revoked key still counts: no silent new admin key
  });
});
