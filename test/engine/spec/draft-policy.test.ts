// A sequence's drafts grow while they are accepted, shrink to what was accepted, and pause
// (longer after each miss in a row) when nothing was; accepted tokens are those sampled equal to
// their draft, each before it having been.
import { describe, expect, it } from 'vitest';
import { DraftPolicy, MAX_DRAFT } from '../../../src/engine/spec/draft-policy.js';

// A history in which the next tokens are always predictable: 0 1 2 … 99 0 1 2 … (the second lap copies the first).
const lap = Array.from({ length: 100 }, (_, i) => i);
const history = [...lap, 0, 1];

/** One verify step: the policy's draft, of which the first `take` tokens are sampled equal, then one that is not. */
function step(p: DraftPolicy, take: number): number[] {
  const draft = p.next(history, 100);
  p.begin(draft);
  for (const t of draft.slice(0, take)) expect(p.took(t)).toBe(true);
  if (take < draft.length) expect(p.took(-1)).toBe(false);
  p.end();
  return draft;
}

describe('the draft policy', () => {
  it('starts at 4 tokens and doubles while every drafted token is accepted, up to MAX_DRAFT', () => {
    const p = new DraftPolicy();
    const lengths = [0, 1, 2, 3].map(() => step(p, Infinity).length);
    expect(lengths).toEqual([4, 8, MAX_DRAFT, MAX_DRAFT]);
    expect(p.accepted).toBe(p.drafted);
  });

  it('shrinks to one more than was accepted', () => {
    const p = new DraftPolicy();
    step(p, 2);
    expect(p.next(history, 100)).toHaveLength(3);
  });

  it('pauses after a draft of which nothing was accepted: 2, then 4 steps, then drafts again', () => {
    const p = new DraftPolicy();
    step(p, 0);
    expect([p.next(history, 100), p.next(history, 100)]).toEqual([[], []]);
    step(p, 0);
    for (let i = 0; i < 4; i++) expect(p.next(history, 100)).toEqual([]);
    expect(p.next(history, 100).length).toBeGreaterThan(0);
  });

  it('never drafts past the room it is given', () => {
    expect(new DraftPolicy().next(history, 2)).toHaveLength(2);
    expect(new DraftPolicy().next(history, 0)).toEqual([]);
  });

  it('counts a token accepted only while every one before it was', () => {
    const p = new DraftPolicy();
    p.begin([5, 6, 7]);
    expect([p.took(5), p.took(9), p.took(7)]).toEqual([true, false, false]);
    p.end();
    expect([p.drafted, p.accepted]).toEqual([3, 1]);
    // Outside a verify step nothing is accepted.
    expect(p.took(5)).toBe(false);
  });
});
