// The conversation of a stored response, as items with ids: what
// GET /v1/responses/{id}/input_items lists and what previous_response_id continues from.
// A response keeps every item that led to it (the response it continued: its items,
// then its output; then its own input), so a chain still reads whole after an earlier
// link was deleted, as OpenAI's does. Instructions are not items: each request gives its
// own, as OpenAI documents.
import type {
  ResponseFunctionToolCallItem,
  ResponseFunctionToolCallOutputItem,
  ResponseInputMessageItem,
  ResponseItem,
  ResponseOutputMessage,
} from 'openai/resources/responses/responses';
import type { StoredResponse } from '../../access/store.js';
import { randomId } from '../ids.js';
import type { InputItem } from '../schemas/responses.js';

const texts = (v: string | { text?: unknown }[]) => (typeof v === 'string' ? [v] : v.map((p) => String(p.text)));

/** One input item as the API lists it: an id, a status, text as parts. */
export function listed(item: InputItem): ResponseItem {
  if (item.type === 'function_call') {
    const out: ResponseFunctionToolCallItem = {
      id: item.id ?? randomId('fc_'),
      type: 'function_call',
      call_id: item.call_id,
      name: item.name,
      arguments: item.arguments,
      status: 'completed',
    };
    return out;
  }
  if (item.type === 'function_call_output') {
    const out: ResponseFunctionToolCallOutputItem = {
      id: item.id ?? randomId('fco_'),
      type: 'function_call_output',
      call_id: item.call_id,
      output: typeof item.output === 'string' ? item.output : texts(item.output).map((text) => ({ type: 'input_text' as const, text })),
      status: 'completed',
    };
    return out;
  }
  const id = item.id ?? randomId('msg_');
  if (item.role === 'assistant') {
    const out: ResponseOutputMessage = {
      id,
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: texts(item.content).map((text) => ({ type: 'output_text', text, annotations: [], logprobs: [] })),
    };
    return out;
  }
  const out: ResponseInputMessageItem = {
    id,
    type: 'message',
    role: item.role,
    status: 'completed',
    content: typeof item.content === 'string' ? [{ type: 'input_text', text: item.content }] : item.content.map(inputPart),
  };
  return out;
}

/** A user message's part as listed: its text, or its image (kept, so a continued conversation still shows it to the model). */
function inputPart(p: { type: string; text?: unknown; image_url?: unknown; detail?: unknown }): ResponseInputMessageItem['content'][number] {
  if (p.type !== 'input_image') return { type: 'input_text', text: String(p.text) };
  const detail = p.detail === 'low' || p.detail === 'high' ? p.detail : 'auto';
  return { type: 'input_image', image_url: typeof p.image_url === 'string' ? p.image_url : null, file_id: null, detail };
}

/** A request's own input as listed items (a string input is one user message). */
export function listedInput(input: string | InputItem[]): ResponseItem[] {
  return typeof input === 'string' ? [listed({ role: 'user', content: input })] : input.map(listed);
}

/** Item types a conversation is made of here; others a response may carry (reasoning) are not fed back. */
export const CONVERSATION_TYPES = new Set(['message', 'function_call', 'function_call_output']);

/** What a response continuing `prev` starts from: prev's conversation, then its output. */
export function conversationAfter(prev: StoredResponse): Record<string, unknown>[] {
  const output = Array.isArray(prev.response.output) ? (prev.response.output as Record<string, unknown>[]) : [];
  return [...prev.input_items, ...output].filter((i) => CONVERSATION_TYPES.has(String(i.type)));
}

/** The earlier items, then the new ones that are not among them already (an item a client
 * sends again by its id is taken once). */
export function joinConversation(earlier: Record<string, unknown>[], own: ResponseItem[]): Record<string, unknown>[] {
  const seen = new Set(earlier.map((i) => i.id));
  return [...earlier, ...(own as unknown as Record<string, unknown>[]).filter((i) => !seen.has(i.id))];
}
