// usage.completion_tokens_details.reasoning_tokens, from what a reasoning model's replies
// report; the usage of models that do not reason is left as it is.
import type { CompletionUsage } from 'openai/resources/completions';
import type { GenerateResult } from '../../engine/protocol.js';

export function withReasoningTokens(usage: CompletionUsage, results: readonly (GenerateResult | undefined)[]): CompletionUsage {
  const counted = results.filter((r) => r?.reasoning_tokens !== undefined);
  if (counted.length === 0) return usage;
  const reasoning_tokens = counted.reduce((n, r) => n + r!.reasoning_tokens!, 0);
  return { ...usage, completion_tokens_details: { ...usage.completion_tokens_details, reasoning_tokens } };
}
