// What model files take in the origin's Cache API bucket, and evicting them, by the
// folder they sit in (a prefix of their cache keys).
import { MODEL_CACHE } from './web-cache.js';

async function keysUnder(prefix: string): Promise<{ cache: Cache; keys: Request[] } | undefined> {
  if (typeof caches === 'undefined' || !(await caches.has(MODEL_CACHE))) return undefined;
  const cache = await caches.open(MODEL_CACHE);
  return { cache, keys: (await cache.keys()).filter((r) => r.url.startsWith(prefix)) };
}

/** Bytes of the cached files under `prefix`. */
export async function cachedBytes(prefix: string): Promise<number> {
  const found = await keysUnder(prefix);
  if (!found) return 0;
  let bytes = 0;
  for (const key of found.keys) {
    const res = await found.cache.match(key);
    bytes += Number(res?.headers.get('content-length') ?? 0) || (res ? (await res.arrayBuffer()).byteLength : 0);
  }
  return bytes;
}

/** Deletes the cached files under `prefix`; returns how many there were. */
export async function evictFolder(prefix: string): Promise<number> {
  const found = await keysUnder(prefix);
  if (!found) return 0;
  await Promise.all(found.keys.map((k) => found.cache.delete(k)));
  return found.keys.length;
}
