import type { SamplingParams } from '../protocol.js';
import { firstSorted } from './select.js';

export interface SampledToken {
  id: number;
  /** Log-probability of the chosen token under the distribution it was drawn from. */
  logprob: number;
  /** The most likely alternatives (ids and logprobs), best first; empty unless asked for. */
  top: { id: number; logprob: number }[];
}

export type SamplerParams = Pick<
  SamplingParams,
  'temperature' | 'top_p' | 'top_k' | 'min_p' | 'presence_penalty' | 'frequency_penalty' | 'logprobs'
>;

/**
 * The best tokens of one row, best first (logit descending, ties by the lower id, as
 * onnxruntime's TopK orders them), and the row's log-normaliser at the temperature it is
 * sampled at (1 when greedy). `complete`: they are every token of the row that can be drawn.
 */
export interface RowCandidates {
  ids: ArrayLike<number>;
  logits: ArrayLike<number>;
  lse: number;
  complete: boolean;
}

/** What a row's logits arrive as: its best candidates (the usual case), or the whole row. */
export type RowLogits = { candidates: RowCandidates } | { whole: Float32Array };

/**
 * Whether a row must be sampled from its whole row of logits this step, whatever its
 * candidates hold: penalties and bans rewrite logits anywhere in the row, and more top
 * logprobs than the candidates hold cannot come from them. (Grammar masks are the
 * scheduler's: it masks whole rows.) A draw that falls outside the candidates asks for the
 * whole row too (sampleToken returns null).
 */
export function needsWholeRow(params: SamplerParams, counts: ReadonlyMap<number, number>, candidates: number): boolean {
  return isPenalised(params, counts) || params.logprobs > candidates;
}

/** Presence or frequency penalties apply once tokens have been generated. */
const isPenalised = (p: SamplerParams, counts: ReadonlyMap<number, number>): boolean =>
  counts.size > 0 && (p.presence_penalty !== 0 || p.frequency_penalty !== 0);

/** A temperature so small that logits / t overflow (5e-324 passes the API's 0–2 check) is greedy in effect. */
export const isGreedy = (params: Pick<SamplerParams, 'temperature'>): boolean => !(params.temperature >= 1e-6);

/**
 * Picks the next token. The rule, the same from candidates or a whole row: order the tokens
 * by logit (ties by id); greedy takes the first. Otherwise, with p the softmax at the
 * temperature, keep the first top_k, those with p ≥ min_p × the best's, and the shortest
 * prefix reaching top_p; then walk them with u × (their mass), u from `draw` (taken once a
 * step, so a retry with the whole row draws the same). With none of the three filters the
 * mass is 1 by definition: the walk rarely leaves the candidates, and only then is the whole
 * row needed. Null: the candidates cannot decide this draw; sample again from the whole row.
 *
 * The engine owns this rather than transformers.js because that sampler ignores top_p, has no
 * per-request seed, no presence/frequency penalties and no logprobs. `counts` maps token id →
 * times generated (penalties, whole rows only); `banned` ids get -Infinity.
 */
export function sampleToken(
  row: RowLogits,
  params: SamplerParams,
  draw: () => number,
  counts: ReadonlyMap<number, number> = new Map(),
  banned: readonly number[] = [],
): SampledToken | null {
  const greedy = isGreedy(params);
  const t = greedy ? 1 : params.temperature;
  let u: number | undefined;
  const source = draw;
  draw = () => (u ??= source());
  if ('candidates' in row) return pick(row.candidates, params, t, greedy, draw);
  const scores = penalise(row.whole, params, counts, banned);
  // From the whole row: its best tokens in order, more of them only while the draw needs more.
  // Greedy without logprobs needs no normaliser (a pass of exp over the vocabulary).
  let lse = NaN;
  const normaliser = () => (Number.isNaN(lse) ? (lse = logSumExp(scores, t)) : lse);
  const first = bestOf(scores, Math.max(64, params.logprobs));
  const firstTry = pick(wholeRowCandidates(scores, first.ids, first.drawable, normaliser), params, t, greedy, draw);
  if (firstTry) return firstTry;
  const drawable: number[] = [];
  for (let i = 0; i < scores.length; i++) if (scores[i] > -Infinity) drawable.push(i);
  const order = (a: number, b: number) => scores[b] - scores[a] || a - b;
  for (let n = first.ids.length * 4; ; n *= 4) {
    const ids = firstSorted(drawable, n, order);
    const token = pick(wholeRowCandidates(scores, ids, drawable.length, normaliser), params, t, greedy, draw);
    if (token) return token;
  }
}

function wholeRowCandidates(scores: Float32Array, ids: number[], drawable: number, lse: () => number): RowCandidates {
  return {
    ids,
    logits: ids.map((i) => scores[i]),
    get lse() {
      return lse();
    },
    complete: ids.length === drawable,
  };
}

/** The `k` best drawable ids in order (logit descending, ties by id) in one pass, and how many are drawable. */
function bestOf(scores: Float32Array, k: number): { ids: number[]; drawable: number } {
  const best: number[] = [];
  let drawable = 0;
  for (let i = 0; i < scores.length; i++) {
    const s = scores[i];
    if (!(s > -Infinity)) continue;
    drawable++;
    if (best.length === k && !(s > scores[best[k - 1]])) continue;
    let j = best.length < k ? best.length : k - 1;
    best[j] = i;
    while (j > 0 && s > scores[best[j - 1]]) {
      best[j] = best[j - 1];
      best[j - 1] = i;
      j--;
    }
  }
  return { ids: best, drawable };
}

function pick(c: RowCandidates, p: SamplerParams, t: number, greedy: boolean, draw: () => number): SampledToken | null {
  const n = c.ids.length;
  const prob = (k: number) => Math.exp(c.logits[k] / t - c.lse);
  let chosen: number;
  if (n === 0 || c.logits[0] === -Infinity) chosen = -1; // every token is masked: nothing may be drawn
  else if (greedy) chosen = 0;
  else {
    const k = drawIndex(c, p, prob, draw);
    if (k === null) return null;
    chosen = k;
  }
  const top = p.logprobs > 0 ? Array.from({ length: Math.min(p.logprobs, n) }, (_, k) => ({ id: c.ids[k], logprob: c.logits[k] / t - c.lse })) : [];
  if (chosen === -1) return { id: -1, logprob: -Infinity, top };
  return {
    id: c.ids[chosen],
    // Read only where logprobs were asked for (a whole row's normaliser is a pass over it).
    get logprob() {
      return c.logits[chosen] / t - c.lse;
    },
    top,
  };
}

/** The index among the candidates the draw lands on; null when the candidates end before the rule does. */
function drawIndex(c: RowCandidates, p: SamplerParams, prob: (k: number) => number, draw: () => number): number | null {
  const n = c.ids.length;
  const truncated = p.top_k > 0 || p.top_p < 1 || p.min_p > 0;
  if (!truncated) {
    // The whole distribution: mass 1.
    let r = draw();
    for (let k = 0; k < n; k++) {
      const q = prob(k);
      if (q === 0) break;
      if ((r -= q) <= 0) return k;
    }
    return c.complete ? lastDrawable(c) : null;
  }
  const limit = p.top_k > 0 ? p.top_k : Infinity;
  const floor = p.min_p > 0 ? prob(0) * p.min_p : 0;
  let kept = 0;
  let mass = 0;
  for (;;) {
    if (kept >= limit || (p.top_p < 1 && mass >= p.top_p)) break;
    if (kept === n) {
      if (!c.complete) return null; // the kept set may go on past the candidates
      break;
    }
    const q = prob(kept);
    if (q < floor || q === 0) break;
    mass += q;
    kept++;
  }
  kept = Math.max(1, kept);
  let r = draw() * mass;
  for (let k = 0; k < kept; k++) if ((r -= prob(k)) <= 0) return k;
  return kept - 1;
}

/** Rounding left the walk short of its mass: the last token it could have reached. */
function lastDrawable(c: RowCandidates): number {
  let k = c.ids.length - 1;
  while (k > 0 && c.logits[k] === -Infinity) k--;
  return k;
}

function penalise(logits: Float32Array, p: SamplerParams, counts: ReadonlyMap<number, number>, banned: readonly number[]): Float32Array {
  const penalised = isPenalised(p, counts);
  if (!penalised && !banned.length) return logits;
  const scores = Float32Array.from(logits);
  if (penalised) for (const [id, n] of counts) scores[id] -= p.presence_penalty + p.frequency_penalty * n;
  for (const id of banned) scores[id] = -Infinity;
  return scores;
}

export function logSumExp(scores: ArrayLike<number>, t: number): number {
  let max = -Infinity;
  for (let i = 0; i < scores.length; i++) if (scores[i] / t > max) max = scores[i] / t;
  if (max === -Infinity) return -Infinity;
  let sum = 0;
  for (let i = 0; i < scores.length; i++) sum += Math.exp(scores[i] / t - max);
  return max + Math.log(sum);
}
