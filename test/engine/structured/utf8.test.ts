// Under a grammar, tokens that would make the text malformed UTF-8 are masked out.
import { describe, expect, it } from 'vitest';
import { CLEAN, feedUtf8, Utf8Filter } from '../../../src/engine/structured/utf8.js';

const b = (...xs: number[]) => Uint8Array.from(xs);

describe('UTF-8 well-formedness under a grammar', () => {
  it('accepts whole and split characters and refuses malformed forms', () => {
    expect(feedUtf8(CLEAN, new TextEncoder().encode('é漢😀'))).toEqual(CLEAN);
    expect(feedUtf8(CLEAN, b(0xe6))).toMatchObject({ need: 2 });
    for (const bad of [b(0xc0, 0xb6), b(0x80), b(0xe0, 0x80, 0x80), b(0xed, 0xa0, 0x80), b(0xf4, 0x90, 0x80, 0x80), b(0xff), b(0xc3, 0x41)]) {
      expect(feedUtf8(CLEAN, bad), [...bad].join(' ')).toBeNull();
    }
  });

  it('masks tokens that cannot start or cannot continue a character, and leaves special tokens alone', () => {
    // ids: 0 "a", 1 C3 (lead), 2 A9 (continuation), 3 C0 (never valid), 4 special (no bytes)
    const filter = new Utf8Filter([b(0x61), b(0xc3), b(0xa9), b(0xc0), b()]);
    const after = (state = CLEAN) => {
      const logits = new Float32Array(5);
      filter.mask(logits, state);
      return [...logits].map((x, id) => (x === -Infinity ? null : id)).filter((x) => x !== null);
    };
    expect(after()).toEqual([0, 1, 4]);
    expect(after(filter.next(CLEAN, 1))).toEqual([2, 4]);
  });
});
