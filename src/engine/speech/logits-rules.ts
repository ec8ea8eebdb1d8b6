// The rules Whisper's decoding applies to each step's logits before it picks a token, as
// openai-whisper's decoding.py writes them (SuppressBlank / SuppressTokens / ApplyTimestampRules):
// the suppress lists, and with timestamps on, timestamps in pairs that never go back, a first
// token that is a timestamp no later than max_initial_timestamp, and a timestamp forced when the
// timestamps together are likelier than any text token.
import type { WhisperConfig } from './whisper-config.js';

export interface RuleOptions {
  timestamps: boolean;
}

/**
 * Masks `logits` (one row of the vocabulary) in place. `sampled` are the tokens this window
 * has produced so far, after its prompt.
 */
export function applyWhisperRules(logits: Float32Array, sampled: readonly number[], config: WhisperConfig, opts: RuleOptions): void {
  for (const t of config.suppressTokens) if (t < logits.length) logits[t] = -Infinity;
  if (opts.timestamps) applyTimestampRules(logits, sampled, config);
  if (sampled.length === 0) for (const t of config.beginSuppressTokens) if (t < logits.length) logits[t] = -Infinity;
}

function applyTimestampRules(logits: Float32Array, seq: readonly number[], config: WhisperConfig): void {
  const { timestampBegin: begin, eos, noTimestamps } = config.ids;
  logits[noTimestamps] = -Infinity;
  const n = seq.length;
  const lastWasTimestamp = n >= 1 && seq[n - 1]! >= begin;
  const penultimateWasTimestamp = n < 2 || seq[n - 2]! >= begin;
  if (lastWasTimestamp) {
    if (penultimateWasTimestamp) logits.fill(-Infinity, begin); // has to be text
    else logits.fill(-Infinity, 0, eos); // has to be a timestamp (or the end)
  }
  let lastTimestamp = -1;
  for (let i = n - 1; i >= 0; i--) {
    if (seq[i]! >= begin) {
      lastTimestamp = seq[i]!;
      break;
    }
  }
  if (lastTimestamp >= 0) {
    // Timestamps never decrease, and a segment that just opened cannot close at once (no empty segments to loop on).
    const from = lastWasTimestamp && !penultimateWasTimestamp ? lastTimestamp : lastTimestamp + 1;
    logits.fill(-Infinity, begin, Math.min(from, logits.length));
  }
  if (n === 0) {
    logits.fill(-Infinity, 0, begin);
    if (config.maxInitialTimestampIndex !== undefined) logits.fill(-Infinity, begin + config.maxInitialTimestampIndex + 1);
  }
  // A timestamp is forced when all timestamps together are likelier than the likeliest text token.
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) if (logits[i]! > max) max = logits[i]!;
  if (max === -Infinity) return;
  let sumTimestamps = 0;
  let sumAll = 0;
  let maxText = -Infinity;
  for (let i = 0; i < logits.length; i++) {
    const e = Math.exp(logits[i]! - max);
    sumAll += e;
    if (i >= begin) sumTimestamps += e;
    else if (logits[i]! > maxText) maxText = logits[i]!;
  }
  const logZ = max + Math.log(sumAll);
  const timestampLogprob = max + Math.log(sumTimestamps) - logZ;
  if (timestampLogprob > maxText - logZ) logits.fill(-Infinity, 0, begin);
}
