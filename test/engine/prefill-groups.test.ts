import { describe, expect, it } from 'vitest';
import { prefillGroups } from '../../src/engine/prefill-groups.js';

const chunk = (item: string, tokens: number, past = 0) => ({ item, tokens, past });
const items = (groups: { item: string }[][]) => groups.map((g) => g.map((c) => c.item).sort());

describe('prefill groups', () => {
  it('runs a burst of similar short prompts together', () => {
    const groups = prefillGroups([chunk('a', 20), chunk('b', 24), chunk('c', 18), chunk('d', 22)]);
    expect(items(groups)).toEqual([['a', 'b', 'c', 'd']]);
  });

  it('keeps a long chunk apart from short ones, which would be padded to its length', () => {
    const groups = prefillGroups([chunk('short1', 20), chunk('long', 256), chunk('short2', 24)]);
    expect(items(groups)).toEqual([['long'], ['short1', 'short2']]);
  });

  it('keeps a row with a long cached past apart from rows with none', () => {
    const groups = prefillGroups([chunk('cached', 10, 1500), chunk('fresh1', 12), chunk('fresh2', 11)]);
    expect(items(groups)).toHaveLength(2);
    expect(items(groups)).toContainEqual(['cached']);
  });

  it('gives a chunk the graph must run alone a group of its own, and groups the others as before', () => {
    const chunks = [chunk('fresh1', 20), chunk('cached1', 12, 30), chunk('fresh2', 22), chunk('cached2', 14, 40), chunk('fresh3', 21)];
    const groups = prefillGroups(chunks, 16, (c) => c.past > 0);
    expect(items(groups)).toHaveLength(3);
    expect(items(groups)).toContainEqual(['fresh1', 'fresh2', 'fresh3']);
    expect(items(groups)).toContainEqual(['cached1']);
    expect(items(groups)).toContainEqual(['cached2']);
  });

  it('puts every chunk in exactly one group of at most maxRows', () => {
    const chunks = Array.from({ length: 40 }, (_, i) => chunk(`s${i}`, 10 + (i % 7)));
    const groups = prefillGroups(chunks, 16);
    expect(groups.every((g) => g.length <= 16)).toBe(true);
    expect(groups.flat().map((c) => c.item).sort()).toEqual(chunks.map((c) => c.item).sort());
  });
});
