// Reasoning models write `<think>…</think>` before their answer (Qwen3, QwQ, the DeepSeek-R1
// distills, SmolLM3, …). Which models do, and where a reply starts, is read from their files
// and from the prompt their chat template renders, never from a list of names.
import type { ThinkingStart } from '../protocol.js';

export const THINK_OPEN = '<think>';
export const THINK_CLOSE = '</think>';

/**
 * A checkpoint reasons when its tokenizer has both tags as tokens of their own (added tokens)
 * and its chat template writes them (to open the reply, to drop old thinking, to switch it off).
 */
export function writesThinking(addedTokens: readonly string[], template: string): boolean {
  return addedTokens.includes(THINK_OPEN) && addedTokens.includes(THINK_CLOSE) && (template.includes(THINK_OPEN) || template.includes(THINK_CLOSE));
}

/**
 * Where the reply starts, from the rendered prompt's end: inside a block the template opened
 * (`…<think>\n`, as Qwen3-Thinking-2507's, QwQ's and the R1 distills' templates do), after one it
 * closed (`<think>\n\n</think>\n\n`, Qwen3's enable_thinking=false), or free to open one.
 */
export function thinkingStart(prompt: string): ThinkingStart {
  const end = prompt.trimEnd();
  if (end.endsWith(THINK_OPEN)) return 'inside';
  if (end.endsWith(THINK_CLOSE)) return 'after';
  return 'free';
}
