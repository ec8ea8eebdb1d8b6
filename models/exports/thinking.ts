// A designed reasoning model on Qwen3's real vocabulary: whatever the conversation, its greedy
// reply to a prompt that ends in the chat template's generation prompt is a known think block
// and a known answer, then EOS. Random weights never write a think block, so the reasoning
// tests need weights chosen for it (designed.ts says how the weights pick each next token).
import type { LlamaConfig, LlamaWeights } from '../llama/weights.js';
import type { Rng } from '../rng.js';
import { designedWeights, type TokenizerJson, type Transition } from './designed.js';

/** The designed reply, as text (what the real tokenizer encodes to exactly the designed tokens). */
export const THINKING_REPLY = {
  thinking: 'The user greets me, so a short friendly reply fits.\n',
  answer: 'Hello! How can I help you today?',
};

// The chains, token by token, in the tokenizer's own pieces (plain text here; byte-level below).
const THINKING = ['The', ' user', ' gre', 'ets', ' me', ',', ' so', ' a', ' short', ' friendly', ' reply', ' fits', '.\n'];
const ANSWER = ['Hello', '!', ' How', ' can', ' I', ' help', ' you', ' today', '?'];
const OPEN = '<think>';
const CLOSE = '</think>';
const EOS = '<|im_end|>';
/** The last token of Qwen3's generation prompt `<|im_start|>assistant\n`, and of `…<think>\n`. */
const NEWLINE = '\n';
/** What follows `</think>`, as Qwen3 writes it (and the last token of the prompt with thinking off). */
const GAP = '\n\n';
/** Closes a JSON string: the answer's runner-up to EOS where a grammar does not allow EOS. */
const QUOTE = '"';

export interface ThinkingDesign {
  /** The template opens the think block in the prompt (ends `<think>\n`): the reply starts inside it. */
  openInPrompt: boolean;
}

/** Each state's successors: [next token, weight relative to MARGIN], best first. */
function transitions(design: ThinkingDesign): Transition[] {
  const chain = (pieces: string[], last: [string, number][]): Transition[] =>
    pieces.map((p, i) => [p, i + 1 < pieces.length ? [[pieces[i + 1]!, 1]] : last]);
  return [
    // Where the prompt ends: open the block, or (opened in the prompt) start thinking.
    [NEWLINE, [[design.openInPrompt ? THINKING[0]! : OPEN, 1]]],
    [OPEN, [[THINKING[0]!, 1]]],
    ...chain(THINKING, [[CLOSE, 1]]),
    [CLOSE, [[GAP, 1]]],
    [GAP, [[ANSWER[0]!, 1]]],
    // The answer ends the reply; inside a JSON string, where EOS is not allowed, it closes the string.
    ...chain(ANSWER, [[EOS, 1], [QUOTE, 0.5]]),
  ];
}

/**
 * The weights: Qwen3-shaped layers with random q/k/v/gate/up and zero output projections, one-hot
 * embeddings per state, and lm_head rows that name each state's successors. Every token outside
 * the chains shares the last state, whose successor is EOS (so any other prompt ends at once)
 * and, where a grammar forbids EOS (a JSON string just opened), the answer: so a constrained
 * answer after the thinking is the designed one, whatever the grammar's layout around it.
 */
export function thinkingWeights(config: LlamaConfig, tokenizer: TokenizerJson, rng: Rng, design: ThinkingDesign): LlamaWeights {
  return designedWeights(config, tokenizer, rng, transitions(design), [[EOS, 1], [ANSWER[0]!, 0.5]]);
}
