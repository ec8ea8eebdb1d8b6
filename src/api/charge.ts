// What a request costs, and its hold on the account's spending cap from admission to
// settlement (access.reserve … hold.settle).
//
// Why the hold is taken before the engine and lowered later: the exact prompt length is
// only known once the engine has tokenized (and, for chat, templated) the prompt, and a
// template adds tokens no byte count of the request can bound for every checkpoint. The
// engine, though, refuses any prompt that does not leave room in the context (prompt <
// context_length, prompt + max_tokens ≤ context_length), so the context bounds every
// request soundly before it starts. The hold is taken on that bound, so a request that
// cannot fit under the cap never reaches the engine; the engine's first token event
// reports each prompt's real length and the hold is lowered to prompt × input price +
// max_tokens (or the context left) × output price. Holding more than needed for one
// prefill costs nothing but a refusal very close to the cap; holding less could not be
// undone once tokens are out.
import type { Hold, Principal } from '../access/types.js';
import type { ModelState, PromptInput, SamplingParams } from '../engine/protocol.js';
import type { Runtime } from '../types.js';
import type { GenerationSet, Usage } from './generation.js';

type Price = { input_per_1m: number; output_per_1m: number };

function priceOf(runtime: Runtime, model: string): Price {
  return runtime.catalog().find((e) => e.id === model)?.price ?? { input_per_1m: 0, output_per_1m: 0 };
}

export function costUsd(runtime: Runtime, model: string, promptTokens: number, completionTokens: number): number {
  const price = priceOf(runtime, model);
  return (promptTokens * price.input_per_1m) / 1e6 + (completionTokens * price.output_per_1m) / 1e6;
}

/**
 * The most one prompt's generations can cost: `prompt` tokens (undefined: not known yet)
 * once, and n completions of at most max_tokens, or of the context left.
 */
export function maxPromptCost(price: Price, ctx: number, prompt: number | undefined, n: number, maxTokens: number | undefined): number {
  const cost = (p: number, c: number) => (p * price.input_per_1m + n * c * price.output_per_1m) / 1e6;
  if (maxTokens !== undefined) {
    const c = Math.max(0, Math.min(maxTokens, ctx - 1)); // a prompt has at least one token
    return cost(prompt ?? Math.max(1, ctx - c), c);
  }
  if (prompt !== undefined) return cost(prompt, Math.max(0, ctx - prompt));
  // Linear in the prompt length: the most is at one end of 1 … ctx − 1.
  return Math.max(cost(1, ctx - 1), cost(ctx - 1, 1));
}

/** A generating request's hold, and the one call that ends it. */
export interface GenerationCharge {
  /** Charges `u` (null: nothing delivered) and ends the hold; see Hold.settle. */
  settle(u: Usage | null, beforeReply?: boolean): Promise<void>;
  /** Lowers the hold as the engine reports each prompt's real length. */
  watch(set: GenerationSet): void;
}

/** Holds the most the generations can cost before any of them reaches the engine. */
export async function reserveGeneration(
  runtime: Runtime,
  p: Principal,
  model: ModelState,
  prompts: PromptInput[],
  n: number,
  sampling: SamplingParams,
): Promise<GenerationCharge> {
  const price = priceOf(runtime, model.id);
  const known = prompts.map((x) => ('tokens' in x ? x.tokens.length : undefined));
  const bound = () => known.reduce<number>((sum, k) => sum + maxPromptCost(price, model.context_length, k, n, sampling.max_tokens), 0);
  const hold = await runtime.access.reserve(p, { model: model.id, maxCostUsd: bound() });
  return {
    settle: (u, beforeReply = false) => hold.settle(u && usageRecord(runtime, model.id, u), { beforeReply }),
    watch(set) {
      set.onPromptTokens = (prompt, tokens) => {
        known[prompt] = tokens;
        hold.lower(bound());
      };
    },
  };
}

/** An embedding request: every input has at most context_length tokens. */
export function reserveEmbedding(runtime: Runtime, p: Principal, model: ModelState, input: (string | number[])[]): Promise<Hold> {
  const tokens = input.reduce<number>((sum, x) => sum + (typeof x === 'string' ? model.context_length : x.length), 0);
  return runtime.access.reserve(p, { model: model.id, maxCostUsd: costUsd(runtime, model.id, tokens, 0) });
}

export function usageRecord(runtime: Runtime, model: string, u: { prompt_tokens: number; completion_tokens: number }) {
  return { model, prompt_tokens: u.prompt_tokens, completion_tokens: u.completion_tokens, cost_usd: costUsd(runtime, model, u.prompt_tokens, u.completion_tokens) };
}
