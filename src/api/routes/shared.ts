// Small pieces the generating routes have in common.
import type { CompletionUsage } from 'openai/resources/completions';
import type { GenerateResult } from '../../engine/protocol.js';
import { type GenerationSet, type Usage } from '../generation.js';

export const SYSTEM_FINGERPRINT = 'fp_hearth';

export function finishUsage(u: Usage): CompletionUsage {
  return {
    prompt_tokens: u.prompt_tokens,
    completion_tokens: u.completion_tokens,
    total_tokens: u.prompt_tokens + u.completion_tokens,
    prompt_tokens_details: { cached_tokens: u.cached_tokens },
  };
}

/** Waits for a non-streamed request's generations and records what was spent: on
 * success, and on a cut or failure too when tokens had already been produced. */
export async function respondWith(set: GenerationSet, record: (u: Usage) => Promise<void>): Promise<GenerateResult[]> {
  try {
    const results = await set.all();
    await record(set.usage());
    return results;
  } catch (err) {
    const u = set.usage();
    if (u.completion_tokens > 0) await record(u);
    throw err;
  }
}
