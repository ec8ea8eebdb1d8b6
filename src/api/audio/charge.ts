// What a transcription or translation costs: its audio's exact duration × the model's catalog
// price a second (`price.per_audio_second`), through the same ledger and spending caps as tokens.
// The hold taken before the engine runs is the most the file can cost: its duration bound
// (duration-bound.ts: a WAV's from its header, any other format the server's
// --max-audio-seconds, which the engine enforces) × the price. The ledger line carries no
// tokens (audio is not billed by them); its cost and its request are what `hearth usage` shows.
import type { Hold, Principal, UsageRecord } from '../../access/types.js';
import type { Runtime } from '../../types.js';
import { audioSecondsBound } from './duration-bound.js';

export interface AudioCharge {
  /** Charges `seconds` of audio (null: nothing served) and ends the hold; see Hold.settle. */
  settle(seconds: number | null, beforeReply?: boolean): Promise<void>;
}

export function pricePerSecond(runtime: Runtime, model: string): number {
  return runtime.catalog().find((e) => e.id === model)?.price.per_audio_second ?? 0;
}

export function audioUsage(runtime: Runtime, model: string, seconds: number): UsageRecord {
  return { model, prompt_tokens: 0, completion_tokens: 0, cost_usd: seconds * pricePerSecond(runtime, model) };
}

/** Holds the most `audio` can cost before the engine sees it (429 insufficient_quota when it does not fit). */
export async function reserveAudio(runtime: Runtime, p: Principal, model: string, audio: Uint8Array, maxSeconds: number): Promise<AudioCharge> {
  const maxCostUsd = audioSecondsBound(audio, maxSeconds) * pricePerSecond(runtime, model);
  const hold: Hold = await runtime.access.reserve(p, { model, maxCostUsd });
  return {
    settle: (seconds, beforeReply = false) => hold.settle(seconds === null ? null : audioUsage(runtime, model, seconds), { beforeReply }),
  };
}
