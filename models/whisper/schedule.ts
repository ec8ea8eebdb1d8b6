// tiny-whisper's script, by r = the position whose logits pick the next token minus the position
// of <|startoftranscript|> (so a prompt before it, <|startofprev|> …, moves nothing): text from
// the first step on, EOS from r = 16; with timestamps <|0.00|> (r = 2, forced anyway), a pair at
// 0.60 s (r = 8, 9) and 1.00 s (r = 15), so the words sit at r = 3–7 and 10–14.
//
// Layer 1 computes it from the count u = 1/(r + 1) that its self-attention head 0 leaves in
// DIM.count: its MLP holds, for each boundary b = 1 … 16, a pair of GELU neurons whose
// difference steps from 0 to a constant as u passes halfway between 1/b and 1/(b + 1), and adds
// the schedule's change at b. The neurons read u against the anchor (their offsets go through
// the anchor, not a bias; both read free of LayerNorm's mean, layout.ts), so LayerNorm's scale
// moves no threshold, only the step's height.
import { alignCode, DIM, readAnchor, readFlag } from './layout.js';
import type { Mlp } from './weights.js';

export const SCHEDULE = {
  /** EOS wins from here on. */
  eosAt: 16,
  /** r → timestamp index (× 0.02 s). */
  timestampAt: new Map<number, number>([
    [2, 0],
    [8, 30],
    [9, 30],
    [15, 50],
  ]),
};

/**
 * The encoder frame (20 ms) the token at r is heard at, with timestamps: 0–0.60 s holds the words
 * at r = 4–8, 0.60–1.00 s those at 11–15; timestamps look at their own time. From the last
 * timestamp on, none: that query is zero and its attention uniform, so it is the token that
 * outweighs the others on every frame past the words, and the DTW of word timestamps (weights
 * normalised per frame across tokens, so scale-free) gives those frames to it rather than to the
 * faint side lobes of earlier words.
 */
export function alignFrame(r: number): number | undefined {
  if (r <= 3) return 0;
  if (r <= 8) return 6 * (r - 4) + 3;
  if (r <= 10) return 30;
  if (r <= 15) return 32 + 4 * (r - 11);
  return undefined;
}

/** Step heights are written for this LayerNorm scale at the MLP's input (typical there). */
const NOMINAL_RMS = 1.5;
/** EOS and timestamp drives: −1 off (the bias), −1 + STEP·(NOMINAL_RMS / rms) on. */
const STEP = 3;

/** The schedule's values at r, by residual dim (EOS, timestamp drive and code, align code). */
function scheduleAt(r: number, D: number): Map<number, number> {
  const out = new Map<number, number>();
  const codes = [...new Set(SCHEDULE.timestampAt.values())];
  if (codes.length > DIM.timestampCode[1] - DIM.timestampCode[0]) throw new Error('too many scheduled timestamps for their code dims');
  if (r >= SCHEDULE.eosAt) out.set(DIM.eos, STEP);
  const k = SCHEDULE.timestampAt.get(r);
  if (k !== undefined) {
    out.set(DIM.timestamp, STEP);
    out.set(DIM.timestampCode[0] + codes.indexOf(k), 1);
  }
  const frame = alignFrame(r);
  if (frame !== undefined) alignCode(frame, D).forEach((v, i) => out.set(DIM.align[0] + i, v));
  return out;
}

/** Writes the counting steps into `mlp` (neurons from 0; the others left as they are): returns how many neurons it used. */
export function scheduleMlp(mlp: Mlp, D: number, F: number, anchor: number): number {
  const last = SCHEDULE.eosAt;
  if (2 * last > F) throw new Error('the schedule needs more MLP neurons');
  // Off values: the bias (not scaled by LayerNorm).
  mlp.fc2Bias[DIM.eos] = -1;
  mlp.fc2Bias[DIM.timestamp] = -1;
  for (let b = 1; b <= last; b++) {
    // Nothing before the first step: all of r = 0's values (the align code of frame 0) come with it too.
    const before = b === 1 ? new Map<number, number>() : scheduleAt(b - 1, D);
    const after = scheduleAt(b, D);
    const upper = 1 / b;
    const lower = 1 / (b + 1);
    const threshold = (upper + lower) / 2;
    // z = gain·(threshold − u)/rms: ±8/rms at the two counts either side.
    const gain = 16 / (upper - lower);
    const n1 = 2 * (b - 1);
    const n2 = n1 + 1;
    for (const n of [n1, n2]) {
      readFlag(mlp.fc1, F, n, DIM.count, -gain);
      mlp.fc1Bias[n] = 0;
    }
    // Offsets through the anchor (LayerNorm gives it anchor/rms): GELU(z) − GELU(z − 2/rms) steps 0 → 2/rms.
    readAnchor(mlp.fc1, F, n1, (gain * threshold) / anchor);
    readAnchor(mlp.fc1, F, n2, (gain * threshold - 2) / anchor);
    for (const d of new Set([...before.keys(), ...after.keys()])) {
      const change = ((after.get(d) ?? 0) - (before.get(d) ?? 0)) * (NOMINAL_RMS / 2);
      mlp.fc2[n1 * D + d] = change;
      mlp.fc2[n2 * D + d] = -change;
    }
  }
  return 2 * last;
}
