// What a request costs, and its hold on the account's spending cap from admission to
// settlement (access.reserve … hold.settle).
//
// The hold is the request's most possible cost: its prompt tokens × the input price +
// (max_tokens, or the context left) × n × the output price. A sandbox account's prompts
// are counted before the hold by the engine itself, with the model's own tokenizer and
// chat template, so the hold is exact on the prompt side: a small cap that fits the real
// request serves it. The bound on the output side is sound because the engine refuses any
// prompt that does not leave room in the context (prompt < context_length, prompt +
// max_tokens ≤ context_length) before its first token. Other accounts are never refused,
// so their prompts are not counted twice (a long prompt's tokenization is not free) and
// their hold only carries the charge.
import type { Hold, Principal } from '../access/types.js';
import type { EngineApi, ModelState, PromptInput, SamplingParams } from '../engine/protocol.js';
import type { Runtime } from '../types.js';
import type { GenerationSet, Usage } from './generation.js';
import type { SseProgress } from './sse.js';

type Price = { input_per_1m: number; output_per_1m: number };

/** How long a prompt is: counted (`exactly`), or bounded from above (`atMost`). */
export type PromptSize = { exactly: number } | { atMost: number };

function priceOf(runtime: Runtime, model: string): Price {
  return runtime.catalog().find((e) => e.id === model)?.price ?? { input_per_1m: 0, output_per_1m: 0 };
}

export function costUsd(runtime: Runtime, model: string, promptTokens: number, completionTokens: number): number {
  const price = priceOf(runtime, model);
  return (promptTokens * price.input_per_1m) / 1e6 + (completionTokens * price.output_per_1m) / 1e6;
}

/**
 * The most one prompt's n generations can cost: the prompt once, and n completions of at
 * most max_tokens and at most the context the prompt leaves.
 */
export function maxPromptCost(price: Price, ctx: number, prompt: PromptSize, n: number, maxTokens: number | undefined): number {
  const cost = (p: number) => (p * price.input_per_1m + n * Math.max(0, Math.min(maxTokens ?? Infinity, ctx - p)) * price.output_per_1m) / 1e6;
  if ('exactly' in prompt) {
    // A prompt that leaves no room is refused before it runs: it costs nothing.
    return prompt.exactly >= ctx ? 0 : cost(prompt.exactly);
  }
  // Any prompt from 1 to the bound (and below the context) may be the real one. The cost is
  // piecewise linear in it, with its one kink where the completion stops being max_tokens
  // long: the most is at an end or at the kink.
  const top = Math.max(1, Math.min(prompt.atMost, ctx - 1));
  const kink = maxTokens === undefined ? 1 : Math.max(1, Math.min(top, ctx - maxTokens));
  return Math.max(cost(1), cost(kink), cost(top));
}

/** Each prompt's exact token count where the hold needs it; undefined: not counted. */
async function promptSizes(engine: EngineApi, p: Principal, model: string, prompts: PromptInput[]): Promise<(number | undefined)[]> {
  const sizes = prompts.map((x) => ('tokens' in x ? x.tokens.length : undefined));
  if (!p.sandbox || !engine.countTokens || sizes.every((s) => s !== undefined)) return sizes;
  // Errors are the ones generate would raise (a template's refusal: 400), before any hold.
  return engine.countTokens({ model, prompts });
}

const sizeOf = (counted: number | undefined, ctx: number): PromptSize => (counted === undefined ? { atMost: ctx - 1 } : { exactly: counted });

/** A generating request's hold, and the calls that feed and end it. */
export interface GenerationCharge {
  /** Charges `u` (null: nothing delivered) and ends the hold; see Hold.settle. */
  settle(u: Usage | null, beforeReply?: boolean): Promise<void>;
  /** Lowers the hold as the engine reports each prompt's real length. */
  watch(set: GenerationSet): void;
  /** A stream: what tells the hold what has gone out as it goes, so a crash still charges it. */
  streaming(set: GenerationSet): SseProgress<Usage> | undefined;
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
  const known = await promptSizes(runtime.engine, p, model.id, prompts);
  const bound = () => known.reduce<number>((sum, k) => sum + maxPromptCost(price, model.context_length, sizeOf(k, model.context_length), n, sampling.max_tokens), 0);
  const hold = await runtime.access.reserve(p, { model: model.id, maxCostUsd: bound() });
  return {
    settle: (u, beforeReply = false) => hold.settle(u && usageRecord(runtime, model.id, u), { beforeReply }),
    watch(set) {
      set.onPromptTokens = (prompt, tokens) => {
        known[prompt] = tokens;
        hold.lower(bound());
      };
    },
    streaming(set) {
      const delivered = hold.delivered?.bind(hold);
      let told = 0; // each figure once, from the first token (a role chunk alone delivers nothing)
      return delivered && {
        mark: () => set.deliveredUsage(),
        sent(u) {
          if (u.completion_tokens <= told) return;
          told = u.completion_tokens;
          delivered(usageRecord(runtime, model.id, u));
        },
      };
    },
  };
}

/** An embedding request: each input counted like a prompt; one that is too long is refused unrun. */
export async function reserveEmbedding(runtime: Runtime, p: Principal, model: ModelState, input: (string | number[])[]): Promise<Hold> {
  const prompts = input.map((x) => (typeof x === 'string' ? { text: x } : { tokens: x }));
  const sizes = await promptSizes(runtime.engine, p, model.id, prompts);
  const tokens = sizes.reduce<number>((sum, k) => sum + Math.min(k ?? model.context_length, model.context_length), 0);
  return runtime.access.reserve(p, { model: model.id, maxCostUsd: costUsd(runtime, model.id, tokens, 0) });
}

/**
 * A rerank or score request: each pair counted like a prompt (for a sandbox account, each
 * text counted by the engine and a pair bounded by its two texts and the context; the
 * pair's own encoding shares their special tokens, so it is never longer).
 */
export async function reservePairs(runtime: Runtime, p: Principal, model: ModelState, pairs: [string, string][]): Promise<Hold> {
  const ctx = model.context_length;
  let tokens = pairs.length * ctx;
  if (p.sandbox && runtime.engine.countTokens) {
    const texts = [...new Set(pairs.flat())];
    const counts = await runtime.engine.countTokens({ model: model.id, prompts: texts.map((text) => ({ text })) });
    const count = new Map(texts.map((t, i) => [t, counts[i]!]));
    tokens = pairs.reduce((sum, [a, b]) => sum + Math.min(ctx, count.get(a)! + count.get(b)!), 0);
  }
  return runtime.access.reserve(p, { model: model.id, maxCostUsd: costUsd(runtime, model.id, tokens, 0) });
}

export function usageRecord(runtime: Runtime, model: string, u: { prompt_tokens: number; completion_tokens: number }) {
  return { model, prompt_tokens: u.prompt_tokens, completion_tokens: u.completion_tokens, cost_usd: costUsd(runtime, model, u.prompt_tokens, u.completion_tokens) };
}
