// The cost of a step by its positions is fitted from the steps seen, and the draft length is the
// one that makes the most tokens a millisecond: long where extra positions are cheap and drafts
// are accepted, none where a plain step does better.
import { describe, expect, it } from 'vitest';
import { StepCost } from '../../../src/engine/spec/step-cost.js';

function measured(a: number, b: number): StepCost {
  const cost = new StepCost();
  for (const n of [1, 5, 1, 9, 3, 17, 1]) cost.record(n, a + b * n);
  return cost;
}

describe('the step cost', () => {
  it('fits t(n) = a + b·n from steps of several sizes, and waits for two sizes before fitting', () => {
    const cost = new StepCost();
    cost.record(1, 3);
    cost.record(1, 3);
    expect(cost.fit()).toBeNull();
    const [a, b] = measured(2.5, 0.8).fit()!;
    expect(a).toBeCloseTo(2.5, 6);
    expect(b).toBeCloseTo(0.8, 6);
  });

  it('drafts the longest it may before the fit exists', () => {
    expect(new StepCost().bestDraft(0.5, 16)).toBe(16);
  });

  it('drafts long where extra positions are nearly free (a GPU) and drafts are accepted', () => {
    expect(measured(4.5, 0.05).bestDraft(0.95, 16)).toBe(16);
  });

  it('drafts short where each position costs most of a step (a CPU, a 151,936-token lm_head) unless nearly all are accepted', () => {
    const cpu = measured(1.5, 0.8);
    const mid = cpu.bestDraft(0.7, 16);
    expect(mid).toBeGreaterThan(0);
    expect(mid).toBeLessThan(8);
    expect(cpu.bestDraft(0.999, 16)).toBe(16);
  });

  it('does not draft where no draft beats a plain step', () => {
    expect(measured(1, 2).bestDraft(0.5, 16)).toBe(0);
  });
});
