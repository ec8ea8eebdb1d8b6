import { describe, expect, it } from 'vitest';
import { createRng } from '../../src/engine/sampling/rng.js';
import { sampleToken } from '../../src/engine/sampling/sampler.js';

const base = { temperature: 1, top_p: 1, top_k: -1, min_p: 0, presence_penalty: 0, frequency_penalty: 0, logprobs: -1 };
const logits = Float32Array.from({ length: 50 }, (_, i) => Math.sin(i) * 2);

function draw(params: Partial<typeof base>, seed: number, n = 40): number[] {
  const rng = createRng(seed);
  return Array.from({ length: n }, () => sampleToken({ whole: logits }, { ...base, ...params }, rng, new Map())!.id);
}

describe('the sampler', () => {
  it('reproduces the same draws from the same seed', () => {
    expect(draw({}, 7)).toEqual(draw({}, 7));
  });

  it('gives different draws for different seeds', () => {
    expect(draw({}, 7)).not.toEqual(draw({}, 8));
  });

  it('draws nothing (id -1) when every token is masked, greedy or not', () => {
    const masked = new Float32Array(50).fill(-Infinity);
    for (const temperature of [0, 1, 1.5]) expect(sampleToken({ whole: masked }, { ...base, temperature }, createRng(1), new Map())!.id).toBe(-1);
  });

  it('is greedy at temperature 0', () => {
    const best = logits.indexOf(Math.max(...logits));
    expect(new Set(draw({ temperature: 0 }, 1))).toEqual(new Set([best]));
  });

  it('keeps only the k best tokens with top_k', () => {
    const top3 = [...logits.keys()].sort((a, b) => logits[b] - logits[a]).slice(0, 3);
    for (const id of draw({ top_k: 3, temperature: 2 }, 3, 200)) expect(top3).toContain(id);
  });

  it('keeps the smallest nucleus reaching top_p', () => {
    const peaked = Float32Array.from([10, 9, 0, 0, 0]);
    const rng = createRng(1);
    const ids = Array.from({ length: 200 }, () => sampleToken({ whole: peaked }, { ...base, top_p: 0.5 }, rng, new Map())!.id);
    expect(new Set(ids)).toEqual(new Set([0]));
  });

  it('drops tokens under min_p times the best probability', () => {
    const l = Float32Array.from([5, 4.9, 0, 0]);
    const rng = createRng(2);
    const ids = new Set(Array.from({ length: 300 }, () => sampleToken({ whole: l }, { ...base, min_p: 0.5 }, rng, new Map())!.id));
    expect(ids).toEqual(new Set([0, 1]));
  });

  it('applies presence and frequency penalties to tokens already generated', () => {
    const l = Float32Array.from([3, 2.5, 0]);
    const counts = new Map([[0, 2]]);
    const t = sampleToken({ whole: l }, { ...base, temperature: 0, frequency_penalty: 0.5 }, createRng(1), counts)!;
    expect(t.id).toBe(1); // 3 - 2×0.5 = 2 < 2.5
  });

  it('reports logprobs from the distribution it sampled, with the top alternatives best first', () => {
    const l = Float32Array.from([2, 1, 0]);
    const t = sampleToken({ whole: l }, { ...base, temperature: 0, logprobs: 2 }, createRng(1), new Map())!;
    const z = Math.log(Math.exp(2) + Math.exp(1) + 1);
    expect(t.logprob).toBeCloseTo(2 - z, 5);
    expect(t.top.map((x) => x.id)).toEqual([0, 1]);
    expect(t.top[1].logprob).toBeCloseTo(1 - z, 5);
  });
});
