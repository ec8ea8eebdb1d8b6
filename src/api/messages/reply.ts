// A finished reply as Anthropic's Messages API shapes it: a reasoning model's thinking as a
// `thinking` block before the answer, the answer a `text` block, each tool call a `tool_use` block
// (`toolu_` id, `input` the arguments as an object); stop_reason and usage in Anthropic's terms.
import type { FinishReason, GenerateResult } from '../../engine/protocol.js';
import type { Usage } from '../generation.js';
import { randomId } from '../ids.js';
import type { ReplyMessage } from '../tools/respond.js';

export type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use';

export type ContentBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

export interface MessageUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  /** A reasoning model's: the tokens of its thinking (tags included). */
  output_tokens_details?: { thinking_tokens: number };
}

export interface MessageBody {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: ContentBlock[];
  stop_reason: StopReason | null;
  stop_sequence: string | null;
  usage: MessageUsage;
}

/**
 * Anthropic counts as input only the prompt tokens not read from the cache, so that input +
 * cache read + cache creation is the prompt; the prefix cache fills itself, so nothing is
 * counted as written to it on request.
 */
export function messageUsage(u: Usage, reasoningTokens?: number): MessageUsage {
  return {
    input_tokens: u.prompt_tokens - u.cached_tokens,
    output_tokens: u.completion_tokens,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: u.cached_tokens,
    ...(reasoningTokens !== undefined ? { output_tokens_details: { thinking_tokens: reasoningTokens } } : {}),
  };
}

/** Why the reply ended, and the stop sequence that ended it (one of the request's, else null). */
export function stopReason(finish: FinishReason | 'tool_calls', matched: GenerateResult['matched_stop'], sequences: string[]): { stop_reason: StopReason; stop_sequence: string | null } {
  if (finish === 'tool_calls') return { stop_reason: 'tool_use', stop_sequence: null };
  if (finish === 'length') return { stop_reason: 'max_tokens', stop_sequence: null };
  if (typeof matched === 'string' && sequences.includes(matched)) return { stop_reason: 'stop_sequence', stop_sequence: matched };
  return { stop_reason: 'end_turn', stop_sequence: null };
}

/**
 * A thinking block's signature. Anthropic's verifies that a block sent back is the model's own;
 * Hearth verifies nothing (a local model's thinking is the caller's to edit), so this only gives
 * clients the string they expect: a digest of the text (FNV-1a, 64 bits), the same for the same thinking.
 */
export function thinkingSignature(thinking: string): string {
  let h = 0xcbf29ce484222325n;
  for (const byte of new TextEncoder().encode(thinking)) h = BigInt.asUintN(64, (h ^ BigInt(byte)) * 0x100000001b3n);
  return `hearth.${h.toString(16).padStart(16, '0')}`;
}

/** Tool arguments as an object; a call cut short by max_tokens (its JSON unfinished) has none yet. */
export function toolInput(args: string): Record<string, unknown> {
  try {
    const v = JSON.parse(args) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** The content blocks of a finished reply (never none: an empty answer is an empty text block). */
export function contentBlocks(message: ReplyMessage, omitThinking: boolean): ContentBlock[] {
  const blocks: ContentBlock[] = [];
  const thinking = message.reasoning_content;
  if (thinking != null) blocks.push({ type: 'thinking', thinking: omitThinking ? '' : thinking, signature: thinkingSignature(thinking) });
  if (message.content) blocks.push({ type: 'text', text: message.content });
  for (const call of message.tool_calls ?? []) {
    if (call.type !== 'function') continue;
    blocks.push({ type: 'tool_use', id: randomId('toolu_'), name: call.function.name, input: toolInput(call.function.arguments) });
  }
  if (!blocks.some((b) => b.type !== 'thinking')) blocks.push({ type: 'text', text: '' });
  return blocks;
}
