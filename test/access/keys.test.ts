import { describe, expect, it } from 'vitest';
import { constantTimeEqual, generateKey, generateKeyId, hashKey, isWellFormedKey, randomBase62 } from '../../src/access/keys.js';
import { formatResetDuration } from '../../src/access/access.js';

describe('keys', () => {
  it('generates svc_live_ + 40 base62 characters, all different', () => {
    const keys = new Set(Array.from({ length: 200 }, generateKey));
    expect(keys.size).toBe(200);
    for (const k of keys) {
      expect(k).toMatch(/^svc_live_[0-9A-Za-z]{40}$/);
      expect(isWellFormedKey(k)).toBe(true);
    }
  });

  it('draws base62 characters roughly uniformly (no modulo bias)', () => {
    const s = randomBase62(62 * 2000);
    const counts = new Map<string, number>();
    for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).toBe(62);
    // Expected 2000 each; a biased `% 62` over bytes would give the first 8 symbols ~25% more.
    for (const n of counts.values()) expect(n).toBeGreaterThan(1700), expect(n).toBeLessThan(2300);
  });

  it('makes key ids key_ + 12 base62 characters', () => {
    expect(generateKeyId()).toMatch(/^key_[0-9A-Za-z]{12}$/);
  });

  it('tells well-formed keys from the rest', () => {
    expect(isWellFormedKey('svc_live_' + 'a'.repeat(32))).toBe(true);
    expect(isWellFormedKey('svc_live_' + 'a'.repeat(31))).toBe(false);
    expect(isWellFormedKey('svc_live_' + 'a'.repeat(39) + '-')).toBe(false);
    expect(isWellFormedKey('sk-' + 'a'.repeat(48))).toBe(false);
    expect(isWellFormedKey('svc_test_' + 'a'.repeat(40))).toBe(false);
    expect(isWellFormedKey('')).toBe(false);
    expect(isWellFormedKey(undefined)).toBe(false);
  });

  it('hashes with SHA-256 (hex)', async () => {
    expect(await hashKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('compares in constant time, and correctly', () => {
    expect(constantTimeEqual('abcd', 'abcd')).toBe(true);
    expect(constantTimeEqual('abcd', 'abce')).toBe(false);
    expect(constantTimeEqual('abcd', 'abc')).toBe(false);
    expect(constantTimeEqual('', '')).toBe(true);
  });
});

describe('formatResetDuration', () => {
  it.each([
    [250, '250ms'],
    [1, '1ms'],
    [0.2, '1ms'],
    [0, '0s'],
    [-5, '0s'],
    [1000, '1s'],
    [1500, '1.5s'],
    [1250, '1.25s'],
    [59_999, '59.999s'],
    [60_000, '1m0s'],
    [90_000, '1m30s'],
    [360_000, '6m0s'],
    [361_500, '6m1.5s'],
    [3_600_000, '1h0m0s'],
    [3_723_000, '1h2m3s'],
  ])('%s ms → %s', (ms, s) => {
    expect(formatResetDuration(ms)).toBe(s);
  });
});
