import { describe, expect, it } from 'vitest';
import type { SeqKv } from '../../src/engine/kv/layout.js';
import { PrefixCache } from '../../src/engine/kv/prefix-cache.js';

const shape = { layers: 1, kvHeads: 1, headDim: 2 };
/** A cache whose values encode the token they belong to, so slices can be checked. */
function kvFor(tokens: number[]): SeqKv {
  const values = Float32Array.from(tokens.flatMap((t) => [t, -t]));
  return { length: tokens.length, data: [values, values.map((v) => v * 10)] };
}
const bytesPerToken = 2 * 2 * 4;

describe('the prefix cache', () => {
  it('finds the longest cached prefix and returns exactly its KV', () => {
    const cache = new PrefixCache(shape, 1 << 20);
    cache.insert([1, 2, 3, 4, 5], kvFor([1, 2, 3, 4, 5]));
    const hit = cache.match([1, 2, 3, 9, 9])!;
    expect(hit.length).toBe(3);
    expect([...hit.kv.data[0]]).toEqual([1, -1, 2, -2, 3, -3]);
    expect(cache.match([7, 1, 2])).toBeNull();
  });

  it('never matches more than the limit asked for', () => {
    const cache = new PrefixCache(shape, 1 << 20);
    cache.insert([1, 2, 3], kvFor([1, 2, 3]));
    expect(cache.match([1, 2, 3], 2)!.length).toBe(2);
  });

  it('splits edges so diverging prompts share their common part', () => {
    const cache = new PrefixCache(shape, 1 << 20);
    cache.insert([1, 2, 3, 4], kvFor([1, 2, 3, 4]));
    cache.insert([1, 2, 8, 9], kvFor([1, 2, 8, 9]));
    expect(cache.match([1, 2, 8, 9, 10])!.length).toBe(4);
    expect(cache.match([1, 2, 3, 4, 10])!.length).toBe(4);
    expect(cache.match([1, 2, 5])!.length).toBe(2);
    expect(cache.entries).toBe(2);
  });

  it('drops an entry once a longer one covers it', () => {
    const cache = new PrefixCache(shape, 1 << 20);
    cache.insert([1, 2], kvFor([1, 2]));
    cache.insert([1, 2, 3, 4], kvFor([1, 2, 3, 4]));
    expect(cache.entries).toBe(1);
    expect(cache.bytes).toBe(4 * bytesPerToken);
    expect(cache.match([1, 2, 9])!.length).toBe(2);
  });

  it('evicts the least recently used entries to stay within its budget', () => {
    const cache = new PrefixCache(shape, 10 * bytesPerToken);
    cache.insert([1, 1, 1, 1], kvFor([1, 1, 1, 1]));
    cache.insert([2, 2, 2, 2], kvFor([2, 2, 2, 2]));
    cache.match([1, 1, 1, 1, 5]); // 1s are now the most recent
    cache.insert([3, 3, 3, 3], kvFor([3, 3, 3, 3]));
    expect(cache.bytes).toBeLessThanOrEqual(10 * bytesPerToken);
    expect(cache.match([2, 2, 2])).toBeNull();
    expect(cache.match([1, 1, 1])!.length).toBe(3);
    expect(cache.match([3, 3, 3])!.length).toBe(3);
  });

  it('says whether it already holds every token of a run (so nothing need be read back to store it)', () => {
    const cache = new PrefixCache(shape, 1 << 20);
    cache.insert([1, 2, 3, 4], kvFor([1, 2, 3, 4]));
    expect(cache.holds([1, 2, 3, 4])).toBe(true);
    expect(cache.holds([1, 2])).toBe(true);
    expect(cache.holds([1, 2, 3, 4, 5])).toBe(false);
    expect(cache.holds([1, 2, 9])).toBe(false);
    expect(cache.holds([])).toBe(false);
  });
});
