// Small pieces the generating routes have in common.
import type { CompletionUsage } from 'openai/resources/completions';
import type { GenerateResult } from '../../engine/protocol.js';
import type { GenerationCharge } from '../charge.js';
import { type GenerationSet, type Usage } from '../generation.js';
import type { SseProgress } from '../sse.js';

export const SYSTEM_FINGERPRINT = 'fp_hearth';

export function finishUsage(u: Usage): CompletionUsage {
  return {
    prompt_tokens: u.prompt_tokens,
    completion_tokens: u.completion_tokens,
    total_tokens: u.prompt_tokens + u.completion_tokens,
    prompt_tokens_details: { cached_tokens: u.cached_tokens },
  };
}

/** Waits for a non-streamed request's generations and settles its charge before the
 * reply is sent (a charge the store cannot take means no reply: 503); a failure is charged
 * too when tokens had already been produced, and otherwise frees the hold. A client that went
 * away before its reply never receives it, so it is not charged.
 * `beforeCharge` is what must also happen for the reply to go out (storing it): when it
 * fails, nothing is charged and its error is the answer. */
export async function respondWith(set: GenerationSet, charge: GenerationCharge, beforeCharge?: (results: GenerateResult[]) => Promise<void>): Promise<GenerateResult[]> {
  let results: GenerateResult[];
  try {
    results = await set.all();
  } catch (err) {
    const u = set.usage();
    await charge.settle(!set.cancelled && u.completion_tokens > 0 ? u : null);
    throw err;
  }
  if (set.cancelled) {
    await charge.settle(null);
    return results;
  }
  try {
    await beforeCharge?.(results);
  } catch (err) {
    await charge.settle(null);
    throw err;
  }
  await charge.settle(set.usage(), true);
  return results;
}

/** Runs a stream's body, then settles what it produced (nothing, if it was cut before
 * the first token). A client that went away is charged for what had been sent. */
export async function streamThenSettle(set: GenerationSet, charge: GenerationCharge, body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } finally {
    const u = set.usage();
    await charge.settle(!set.cancelled || u.completion_tokens > 0 ? u : null);
  }
}

/** Waits for a stream's first sign of life; an early failure frees the hold. The stream's SSE
 * then records what it delivers in the hold (`progress`), so a crash of this process still charges it. */
export async function startStream(set: GenerationSet, charge: GenerationCharge): Promise<{ progress?: SseProgress }> {
  const progress = charge.streaming(set) as SseProgress | undefined;
  try {
    await set.started();
  } catch (err) {
    await charge.settle(null);
    throw err;
  }
  return progress ? { progress } : {};
}
