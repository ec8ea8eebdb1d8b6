// API keys: generation, hashing, format checks. Runs in Node and in browsers
// (Web Crypto only, no node: imports).

export const KEY_PREFIX = 'svc_live_';
/** Random characters after the prefix in keys we generate. */
export const KEY_RANDOM_LENGTH = 40;

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
// Keys given to us (for example through the MSW double's `apiKeys`) need at least 32
// random characters; the upper bound keeps absurd headers from being hashed.
const WELL_FORMED = /^svc_live_[0-9A-Za-z]{32,128}$/;

function webCrypto(): Crypto {
  const c = (globalThis as { crypto?: Crypto }).crypto;
  if (!c?.getRandomValues || !c.subtle) throw new Error('Web Crypto (globalThis.crypto) is not available');
  return c;
}

/** `n` base62 characters, each uniform: bytes ≥ 248 (= 4 × 62) are rejected, so `% 62` is unbiased. */
export function randomBase62(n: number): string {
  const c = webCrypto();
  let out = '';
  // getRandomValues fills at most 65,536 bytes per call.
  const buf = new Uint8Array(Math.min(65_536, Math.max(16, n * 2)));
  while (out.length < n) {
    c.getRandomValues(buf);
    for (let i = 0; i < buf.length && out.length < n; i++) {
      const b = buf[i]!;
      if (b < 248) out += BASE62[b % 62];
    }
  }
  return out;
}

/** A new secret key: `svc_live_` + 40 base62 characters (about 238 bits). */
export function generateKey(): string {
  return KEY_PREFIX + randomBase62(KEY_RANDOM_LENGTH);
}

/** A non-secret key id, safe to log and print: `key_` + 12 base62 characters. */
export function generateKeyId(): string {
  return 'key_' + randomBase62(12);
}

export function generateAccountId(): string {
  return 'acct_' + randomBase62(12);
}

export function isWellFormedKey(s: unknown): boolean {
  return typeof s === 'string' && WELL_FORMED.test(s);
}

export function isKeyId(s: string): boolean {
  return /^key_[0-9A-Za-z]{1,64}$/.test(s);
}

/** SHA-256 of the key, lower-case hex. Keys are long random strings, so an unsalted
 * fast hash is enough (as for GitHub or Stripe tokens): there is nothing to brute-force. */
export async function hashKey(key: string): Promise<string> {
  const digest = await webCrypto().subtle.digest('SHA-256', new TextEncoder().encode(key));
  let hex = '';
  for (const b of new Uint8Array(digest)) hex += b.toString(16).padStart(2, '0');
  return hex;
}

/** Compares two strings in time that depends only on their lengths. */
export function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
