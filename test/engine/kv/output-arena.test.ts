import { describe, expect, it } from 'vitest';
import { KvOutputArena } from '../../../src/engine/kv/output-arena.js';

const overlaps = (a: ArrayBufferView, b: ArrayBufferView) => a.buffer === b.buffer;

describe('the KV output arena', () => {
  it('never hands out the buffers of the call before, so a step cannot overwrite the past it reads', () => {
    const arena = new KvOutputArena();
    let past = arena.next(new Float32Array(0), 4, 100);
    for (let step = 0; step < 6; step++) {
      const present = arena.next(past[0], 4, 100 + 10 * step);
      for (const p of present) for (const q of past) expect(overlaps(p, q)).toBe(false);
      past = present;
    }
  });

  it('reuses a set two calls later instead of allocating per step', () => {
    const arena = new KvOutputArena();
    const a = arena.next(new Float32Array(0), 2, 64);
    arena.next(a[0], 2, 65);
    const c = arena.next(a[0], 2, 66);
    expect(c.map((x) => x.buffer)).toEqual(a.map((x) => x.buffer));
  });

  it('keeps the element type (float16 caches as Uint16Array) and the exact length asked for', () => {
    const arena = new KvOutputArena();
    const [x] = arena.next(new Uint16Array(0), 1, 33);
    expect(x).toBeInstanceOf(Uint16Array);
    expect(x.length).toBe(33);
    expect(x.byteOffset).toBe(0);
  });

  it('gives memory back when a batch shrinks to a fraction of what it was', () => {
    const arena = new KvOutputArena();
    const big = arena.next(new Float32Array(0), 1, 10_000)[0];
    arena.next(big, 1, 10_000);
    const small = arena.next(big, 1, 100)[0];
    expect(small.buffer.byteLength).toBeLessThan(big.buffer.byteLength / 4);
  });
});
