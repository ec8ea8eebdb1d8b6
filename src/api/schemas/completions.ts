// POST /v1/completions body → what the engine needs. One choice per prompt × n.
import { z } from 'zod';
import type { PromptInput, SamplingParams } from '../../engine/protocol.js';
import * as c from './common.js';

const prompt = z.union([
  z.string(),
  z.array(z.string()).min(1),
  c.tokenIds.min(1),
  z.array(c.tokenIds.min(1)).min(1),
]);

export const completionRequestSchema = z.object({
  ...c.sharedFields,
  prompt,
  max_tokens: c.positiveInt,
  echo: z.boolean().nullish(),
  logprobs: z.int().min(0).max(c.MAX_LOGPROBS).nullish(),
});

export type CompletionRequestBody = z.output<typeof completionRequestSchema>;

export interface CompletionCall {
  model: string;
  /** One per prompt, with the text to echo (null for token prompts: the engine renders it). */
  prompts: { input: PromptInput; text: string | null }[];
  sampling: SamplingParams;
  n: number;
  stream: boolean;
  includeUsage: boolean;
  echo: boolean;
  logprobs: boolean;
}

function prompts(p: CompletionRequestBody['prompt']): CompletionCall['prompts'] {
  if (typeof p === 'string') return [{ input: { text: p }, text: p }];
  if (p.length > 0 && typeof p[0] === 'number') return [{ input: { tokens: p as number[] }, text: null }];
  return (p as (string | number[])[]).map((x) =>
    typeof x === 'string' ? { input: { text: x }, text: x } : { input: { tokens: x }, text: null },
  );
}

export function toCompletionCall(b: CompletionRequestBody): CompletionCall {
  const sampling = c.samplingFrom(b, b.max_tokens, b.logprobs == null ? -1 : b.logprobs);
  return {
    model: b.model,
    prompts: prompts(b.prompt),
    sampling,
    n: c.pick(b.n, 1),
    stream: b.stream === true,
    includeUsage: b.stream_options?.include_usage === true,
    echo: b.echo === true,
    logprobs: b.logprobs != null,
  };
}
