// Partial selection for the sampler: the first n in order without sorting the rest,
// the same as a full sort's first n, and the sampler's top_k/top_p draws unchanged by it.
import { describe, expect, it } from 'vitest';
import { createRng } from '../../src/engine/sampling/rng.js';
import { sampleToken } from '../../src/engine/sampling/sampler.js';
import { firstSorted } from '../../src/engine/sampling/select.js';

describe('firstSorted', () => {
  it('returns the same first n as a full sort, for random, sorted, reversed and tied inputs', () => {
    const rng = createRng(5);
    for (let trial = 0; trial < 300; trial++) {
      const len = 1 + Math.floor(rng() * 300);
      const values = Array.from({ length: len }, () => Math.floor(rng() * (trial % 3 === 0 ? 5 : 1000)));
      if (trial % 7 === 1) values.sort((a, b) => a - b);
      if (trial % 7 === 2) values.sort((a, b) => b - a);
      const ids = values.map((_, i) => i);
      const order = (a: number, b: number) => values[b] - values[a] || a - b;
      const n = Math.floor(rng() * (len + 2));
      expect(firstSorted([...ids], n, order)).toEqual([...ids].sort(order).slice(0, n));
    }
  });
});

describe('the sampler with partial selection', () => {
  // A vocabulary of Qwen's size with a long flat tail: the nucleus is wide.
  const vocab = 151_936;
  const logits = Float32Array.from({ length: vocab }, (_, i) => (i % 97 === 0 ? 4 : 0) + Math.sin(i * 0.37));
  const base = { temperature: 1, top_p: 1, top_k: -1, min_p: 0, presence_penalty: 0, frequency_penalty: 0, logprobs: -1 };

  /** The draw as a full sort of the candidates gives it, for reference. */
  function reference(params: typeof base, r: number): number {
    let max = -Infinity;
    for (const s of logits) max = Math.max(max, s / params.temperature);
    let sum = 0;
    for (const s of logits) sum += Math.exp(s / params.temperature - max);
    const logZ = max + Math.log(sum);
    const probs = Array.from(logits, (s) => Math.exp(s / params.temperature - logZ));
    let cand = probs.map((_, i) => i).filter((i) => probs[i] > 0);
    cand.sort((a, b) => logits[b] - logits[a] || a - b);
    if (params.top_k > 0) cand = cand.slice(0, params.top_k);
    if (params.top_p < 1) {
      let acc = 0;
      let keep = 0;
      while (keep < cand.length && acc < params.top_p) acc += probs[cand[keep++]];
      cand = cand.slice(0, Math.max(1, keep));
    }
    let x = r * cand.reduce((n, i) => n + probs[i], 0);
    for (const i of cand) if ((x -= probs[i]) <= 0) return i;
    return cand[cand.length - 1];
  }

  it('draws what a full sort of the vocabulary would, for top_k, top_p and both', () => {
    for (const params of [{ top_k: 40 }, { top_p: 0.3 }, { top_p: 0.95 }, { top_k: 500, top_p: 0.9 }]) {
      const p = { ...base, ...params };
      for (let seed = 1; seed <= 4; seed++) {
        const r = createRng(seed)();
        expect(sampleToken({ whole: logits }, p, createRng(seed), new Map())!.id).toBe(reference(p, r));
      }
    }
  });
});
