// Which tool-call syntax a checkpoint's chat template teaches, read from the template's
// text as llama.cpp's chat-format detection does (common/chat.cpp): Mistral's
// `[TOOL_CALLS]`, Llama 3.x's `ipython` role (its JSON calls with "parameters"), the
// Hermes/Qwen `<tool_call>` tags. A template without tools gets the Hermes fallback prompt,
// so Hermes is also what an unrecognised template falls back to.
import type { ChatMessage, ToolSyntax } from '../protocol.js';
import { templateTakesTools } from './tool-prompt.js';

export function detectToolSyntax(template: string | null | undefined): ToolSyntax {
  if (!template || !templateTakesTools(template)) return 'hermes';
  if (template.includes('[TOOL_CALLS]')) return 'mistral';
  if (template.includes('<tool_call>')) return 'hermes';
  if (template.includes('<|start_header_id|>ipython<|end_header_id|>')) return 'llama3_json';
  return 'hermes';
}

/** Special tokens that open or close calls: kept in the text (and in the grammar's vocabulary),
 * or a parser could not see them (vLLM decodes tool requests with skip_special_tokens off for this). */
export const CALL_MARKERS: Record<ToolSyntax, string[]> = {
  hermes: ['<tool_call>', '</tool_call>'],
  llama3_json: [],
  mistral: ['[TOOL_CALLS]'],
};

/**
 * Mistral's templates refuse tool call ids that are not 9 alphanumeric characters; OpenAI's
 * (`call_…`) are mapped to their last 9 letters and digits, the same in a call and in its result.
 */
export function withMistralCallIds(messages: ChatMessage[]): ChatMessage[] {
  const short = (id: string) => id.replace(/[^a-zA-Z0-9]/g, '').slice(-9).padStart(9, '0');
  return messages.map((m) => ({
    ...m,
    ...(m.tool_call_id !== undefined ? { tool_call_id: short(m.tool_call_id) } : {}),
    ...(m.tool_calls ? { tool_calls: m.tool_calls.map((c) => ({ ...c, id: short(c.id) })) } : {}),
  }));
}
