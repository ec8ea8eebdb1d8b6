import type { SamplingParams } from '../protocol.js';

export interface SampledToken {
  id: number;
  /** Log-probability of the chosen token under the distribution it was drawn from. */
  logprob: number;
  /** The most likely alternatives (ids and logprobs), best first; empty unless asked for. */
  top: { id: number; logprob: number }[];
}

type Params = Pick<
  SamplingParams,
  'temperature' | 'top_p' | 'top_k' | 'min_p' | 'presence_penalty' | 'frequency_penalty' | 'logprobs'
>;

/**
 * Picks the next token from one row of logits. The engine owns this rather than
 * transformers.js because that sampler ignores top_p, has no per-request seed,
 * no presence/frequency penalties and no logprobs.
 *
 * `counts` maps token id → times generated so far (for the penalties); `banned`
 * ids get -Infinity (EOS before min length, etc.).
 */
export function sampleToken(
  logits: Float32Array,
  params: Params,
  rng: () => number,
  counts: Map<number, number>,
  banned: readonly number[] = [],
): SampledToken {
  const scores = Float32Array.from(logits);
  for (const [id, n] of counts) {
    scores[id] -= params.presence_penalty + params.frequency_penalty * n;
  }
  for (const id of banned) scores[id] = -Infinity;

  // A temperature so small that logits / t overflow (5e-324 passes the API's 0–2 check)
  // is greedy in effect: sample greedily instead of dividing into NaN.
  const greedy = !(params.temperature >= 1e-6);
  const t = greedy ? 1 : params.temperature;
  const logZ = logSumExp(scores, t);
  const logprobOf = (id: number) => scores[id] / t - logZ;

  const id = greedy ? argmax(scores) : drawFiltered(scores, t, logZ, params, rng);
  const top = params.logprobs > 0 ? topK(scores, params.logprobs).map((i) => ({ id: i, logprob: logprobOf(i) })) : [];
  return { id, logprob: logprobOf(id), top };
}

function drawFiltered(scores: Float32Array, t: number, logZ: number, p: Params, rng: () => number): number {
  // Candidates in descending probability; tokens far below the best are dropped
  // before sorting, since a large vocabulary would otherwise be sorted every step.
  const probs = new Float64Array(scores.length);
  let pmax = 0;
  for (let i = 0; i < scores.length; i++) {
    probs[i] = Math.exp(scores[i] / t - logZ);
    if (probs[i] > pmax) pmax = probs[i];
  }
  const floor = Math.max(pmax * 1e-9, p.min_p > 0 ? pmax * p.min_p : 0);
  let cand: number[] = [];
  for (let i = 0; i < probs.length; i++) if (probs[i] >= floor && probs[i] > 0) cand.push(i);
  cand.sort((a, b) => probs[b] - probs[a] || a - b);
  if (p.top_k > 0) cand = cand.slice(0, p.top_k);
  if (p.top_p < 1) {
    let acc = 0;
    let keep = 0;
    while (keep < cand.length && acc < p.top_p) acc += probs[cand[keep++]];
    cand = cand.slice(0, Math.max(1, keep));
  }
  let total = 0;
  for (const i of cand) total += probs[i];
  let r = rng() * total;
  for (const i of cand) {
    r -= probs[i];
    if (r <= 0) return i;
  }
  return cand[cand.length - 1];
}

function logSumExp(scores: Float32Array, t: number): number {
  let max = -Infinity;
  for (const s of scores) if (s / t > max) max = s / t;
  let sum = 0;
  for (const s of scores) sum += Math.exp(s / t - max);
  return max + Math.log(sum);
}

export function argmax(scores: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < scores.length; i++) if (scores[i] > scores[best]) best = i;
  return best;
}

function topK(scores: Float32Array, k: number): number[] {
  const best: number[] = [];
  for (let i = 0; i < scores.length; i++) {
    if (best.length < k || scores[i] > scores[best[best.length - 1]]) {
      let j = best.length < k ? best.length : k - 1;
      best[j] = i;
      while (j > 0 && scores[best[j]] > scores[best[j - 1]]) {
        [best[j], best[j - 1]] = [best[j - 1], best[j]];
        j--;
      }
    }
  }
  return best;
}
