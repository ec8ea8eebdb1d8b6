// A sequence's drafts are as long as its estimated acceptance and the model's step cost make
// worthwhile: the acceptance estimate rises with accepted drafts and falls with cut ones; where no
// draft pays, or nothing was accepted, the sequence pauses (longer after each miss in a row) and
// then probes with a short draft. Accepted tokens are those sampled equal to their draft, each
// before it having been.
import { describe, expect, it } from 'vitest';
import { DraftPolicy, MAX_DRAFT } from '../../../src/engine/spec/draft-policy.js';
import { StepCost } from '../../../src/engine/spec/step-cost.js';

// A history in which the next tokens are always predictable: 0 1 2 … 99 0 1 (the second lap copies the first).
const lap = Array.from({ length: 100 }, (_, i) => i);
const history = [...lap, 0, 1];

/** One verify step: the policy's draft, of which the first `take` tokens are sampled equal, then one that is not. */
function step(p: DraftPolicy, take: number, cost?: StepCost): number[] {
  const draft = p.next(history, 100, cost);
  p.begin(draft);
  for (const t of draft.slice(0, take)) expect(p.took(t)).toBe(true);
  if (take < draft.length) expect(p.took(-1)).toBe(false);
  p.end();
  return draft;
}

/** A CPU-like cost: each extra position costs half a plain step. */
function cpuCost(): StepCost {
  const cost = new StepCost();
  for (const n of [1, 3, 1, 5]) cost.record(n, 2 + n);
  return cost;
}

describe('the draft policy', () => {
  it('drafts the longest it may before the step cost is known', () => {
    expect(step(new DraftPolicy(), Infinity)).toHaveLength(MAX_DRAFT);
  });

  it('estimates acceptance from its verify steps: up with accepted drafts, down with cut ones', () => {
    const p = new DraftPolicy();
    expect(p.acceptance).toBe(0.5);
    step(p, Infinity);
    const high = p.acceptance;
    expect(high).toBeGreaterThan(0.9);
    step(p, 0);
    expect(p.acceptance).toBeLessThan(high);
  });

  it('drafts longer as its drafts keep being accepted, where each position costs', () => {
    const p = new DraftPolicy();
    const cost = cpuCost();
    const lengths = [0, 1, 2, 3, 4, 5].map(() => step(p, Infinity, cost).length);
    expect(lengths[0]).toBeLessThan(MAX_DRAFT);
    expect(lengths.at(-1)).toBeGreaterThan(lengths[0]!);
  });

  it('pauses after a draft of which nothing was accepted: 2, then 4 steps, then drafts again', () => {
    const p = new DraftPolicy();
    step(p, 0);
    expect([p.next(history, 100), p.next(history, 100)]).toEqual([[], []]);
    step(p, 0);
    for (let i = 0; i < 4; i++) expect(p.next(history, 100)).toEqual([]);
    expect(p.next(history, 100).length).toBeGreaterThan(0);
  });

  it('where no draft pays, waits, then probes with a short draft', () => {
    const p = new DraftPolicy();
    const dear = new StepCost();
    for (const n of [1, 2, 1, 3]) dear.record(n, 3 * n); // each position costs a whole step: drafts never pay
    expect(p.next(history, 100, dear)).toEqual([]);
    expect([p.next(history, 100, dear), p.next(history, 100, dear)]).toEqual([[], []]);
    expect(p.next(history, 100, dear)).toHaveLength(2);
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
