// Prompt lookup drafts what followed the latest earlier occurrence of the sequence's last tokens,
// preferring longer matches, never past the history's end, and nothing where nothing matches.
import { describe, expect, it } from 'vitest';
import { lookupDraft } from '../../../src/engine/spec/prompt-lookup.js';

describe('prompt lookup', () => {
  it('drafts what followed the last tokens where they appeared before', () => {
    expect(lookupDraft([1, 2, 3, 4, 5, 9, 2, 3], 3)).toEqual([4, 5, 9]);
  });

  it('prefers the longest suffix that matches over a nearer shorter one', () => {
    // [7, 8, 3] occurs at the start (then 10, 11); [8, 3] alone nearer (then 20); 3 alone nearest (then 30).
    expect(lookupDraft([7, 8, 3, 10, 11, 5, 8, 3, 20, 3, 30, 7, 8, 3], 2)).toEqual([10, 11]);
  });

  it('takes the latest of equally long matches', () => {
    expect(lookupDraft([5, 1, 5, 2, 5, 3, 5], 1)).toEqual([3]);
  });

  it('goes on past the history’s end as the loop it found, and stops at the count asked for', () => {
    expect(lookupDraft([1, 2, 1], 5)).toEqual([2, 1, 2, 1, 2]);
    expect(lookupDraft([9, 4, 5, 6, 4, 5], 5)).toEqual([6, 4, 5, 6, 4]);
    expect(lookupDraft([1, 2, 3, 4, 1], 2)).toEqual([2, 3]);
    expect(lookupDraft([1, 2, 3, 1], 0)).toEqual([]);
  });

  it('drafts nothing when the last token never appeared before', () => {
    expect(lookupDraft([1, 2, 3, 4], 4)).toEqual([]);
    expect(lookupDraft([], 4)).toEqual([]);
    expect(lookupDraft([1], 4)).toEqual([]);
  });
});
