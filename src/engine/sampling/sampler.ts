import type { SamplingParams } from '../protocol.js';
import { firstSorted } from './select.js';

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
  // id -1: every token is masked, nothing may be drawn.
  // Copied only where penalties or bans write to it.
  const penalised = counts.size > 0 && (params.presence_penalty !== 0 || params.frequency_penalty !== 0);
  const scores = penalised || banned.length ? Float32Array.from(logits) : logits;
  if (penalised) {
    for (const [id, n] of counts) scores[id] -= params.presence_penalty + params.frequency_penalty * n;
  }
  for (const id of banned) scores[id] = -Infinity;

  // A temperature so small that logits / t overflow (5e-324 passes the API's 0–2 check)
  // is greedy in effect: sample greedily instead of dividing into NaN.
  const greedy = !(params.temperature >= 1e-6);
  const t = greedy ? 1 : params.temperature;
  // Greedy needs no normaliser unless logprobs are read: it costs a pass of exp over the vocabulary.
  let logZ = greedy ? NaN : logSumExp(scores, t);
  const logprobOf = (id: number) => {
    if (Number.isNaN(logZ)) logZ = logSumExp(scores, t);
    return scores[id] / t - logZ;
  };

  const best = greedy ? argmax(scores) : -1;
  const id = greedy ? (scores[best] === -Infinity ? -1 : best) : drawFiltered(scores, t, logZ, params, rng);
  const top = params.logprobs > 0 ? topK(scores, params.logprobs).map((i) => ({ id: i, logprob: logprobOf(i) })) : [];
  return {
    id,
    get logprob() {
      return logprobOf(id);
    },
    top,
  };
}

function drawFiltered(scores: Float32Array, t: number, logZ: number, p: Params, rng: () => number): number {
  // Candidates in descending probability; tokens far below the best are dropped first,
  // and only as many of the best are put in order as top_k and top_p can keep.
  const probs = new Float64Array(scores.length);
  let pmax = 0;
  for (let i = 0; i < scores.length; i++) {
    probs[i] = Math.exp(scores[i] / t - logZ);
    if (probs[i] > pmax) pmax = probs[i];
  }
  const floor = Math.max(pmax * 1e-9, p.min_p > 0 ? pmax * p.min_p : 0);
  const all: number[] = [];
  for (let i = 0; i < probs.length; i++) if (probs[i] >= floor && probs[i] > 0) all.push(i);
  const order = (a: number, b: number) => probs[b] - probs[a] || a - b;
  const k = p.top_k > 0 ? Math.min(p.top_k, all.length) : all.length;
  let cand = firstSorted(all, p.top_p < 1 ? Math.min(k, 64) : k, order);
  while (p.top_p < 1) {
    let acc = 0;
    let keep = 0;
    while (keep < cand.length && acc < p.top_p) acc += probs[cand[keep++]];
    if (acc >= p.top_p || cand.length === k) {
      cand = cand.slice(0, Math.max(1, keep));
      break;
    }
    // The nucleus is wider than the tokens put in order so far: order more of them.
    cand = firstSorted(all, Math.min(k, cand.length * 4), order);
  }
  let total = 0;
  for (const i of cand) total += probs[i];
  let r = rng() * total;
  for (const i of cand) {
    r -= probs[i];
    if (r <= 0) return i;
  }
  return cand.length ? cand[cand.length - 1] : -1; // -1: nothing may be drawn
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
