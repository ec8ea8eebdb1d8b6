// The Responses API's response object: the output items of a finished reply (a message
// with output_text, function calls), usage, and the request's parameters echoed as
// OpenAI echoes them.
import type {
  Response as ApiResponse,
  ResponseFunctionToolCall,
  ResponseOutputItem,
  ResponseOutputMessage,
  ResponseReasoningItem,
  ResponseStatus,
  ResponseUsage,
} from 'openai/resources/responses/responses';
import type { FinishReason } from '../../engine/protocol.js';
import type { Usage } from '../generation.js';
import { randomId } from '../ids.js';
import type { ChatCall } from '../schemas/chat.js';
import type { ResponsesRequest } from '../schemas/responses.js';

/** The object without the SDK's own field `access_programs`; with `store`, which the API echoes and the SDK's type leaves out. */
export type ResponseBody = Omit<ApiResponse, 'access_programs'> & { store: boolean };

export interface ResponseHead {
  id: string;
  created_at: number;
  model: string;
  body: ResponsesRequest;
  call: ChatCall;
}

export const messageItem = (id: string, text: string, status: ResponseOutputMessage['status']): ResponseOutputMessage => ({
  type: 'message',
  id,
  status,
  role: 'assistant',
  content: [{ type: 'output_text', text, annotations: [], logprobs: [] }],
});

export const functionCallItem = (id: string, callId: string, name: string, args: string, status: ResponseFunctionToolCall['status']): ResponseFunctionToolCall => ({
  type: 'function_call',
  id,
  call_id: callId,
  name,
  arguments: args,
  status,
});

/** A finished reply's items: its text as a message (when there is any, or nothing else), then each call. */
/** A reasoning model's thinking, as the item that comes before the message. */
export const reasoningItem = (id: string, text: string, status: ResponseReasoningItem['status']): ResponseReasoningItem => ({
  type: 'reasoning',
  id,
  summary: [],
  content: [{ type: 'reasoning_text', text }],
  status,
});

export function outputItems(
  content: string | null,
  calls: { id: string; function: { name: string; arguments: string } }[],
  finish: FinishReason,
  reasoning?: string | null,
): ResponseOutputItem[] {
  const status = finish === 'length' ? 'incomplete' : 'completed';
  const items: ResponseOutputItem[] = [];
  if (reasoning) items.push(reasoningItem(randomId('rs_'), reasoning, status));
  if (content || !calls.length) items.push(messageItem(randomId('msg_'), content ?? '', status));
  for (const c of calls) items.push(functionCallItem(randomId('fc_'), c.id, c.function.name, c.function.arguments, status));
  return items;
}

export function responseUsage(u: Usage, reasoningTokens = 0): ResponseUsage {
  return {
    input_tokens: u.prompt_tokens,
    input_tokens_details: { cached_tokens: u.cached_tokens, cache_write_tokens: 0 },
    output_tokens: u.completion_tokens,
    output_tokens_details: { reasoning_tokens: reasoningTokens },
    total_tokens: u.prompt_tokens + u.completion_tokens,
  };
}

const outputText = (items: ResponseOutputItem[]) =>
  items.flatMap((i) => (i.type === 'message' ? i.content.flatMap((c) => (c.type === 'output_text' ? [c.text] : [])) : [])).join('');

/** The response object at any point of its life: `in_progress` while streaming, then final. */
export function responseObject(
  head: ResponseHead,
  status: ResponseStatus,
  output: ResponseOutputItem[],
  extra: { usage?: Usage; reasoningTokens?: number; error?: ApiResponse['error'] } = {},
): ResponseBody {
  const b = head.body;
  return {
    id: head.id,
    object: 'response',
    created_at: head.created_at,
    status,
    ...(status === 'completed' || status === 'incomplete' ? { completed_at: Math.floor(Date.now() / 1000) } : {}),
    background: false,
    error: extra.error ?? null,
    incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    instructions: b.instructions ?? null,
    max_output_tokens: b.max_output_tokens ?? null,
    model: head.model,
    output,
    output_text: outputText(output),
    parallel_tool_calls: b.parallel_tool_calls ?? true,
    previous_response_id: b.previous_response_id ?? null,
    reasoning: { effort: b.reasoning?.effort ?? null, summary: null } as ResponseBody['reasoning'],
    service_tier: 'default',
    store: b.store ?? true,
    temperature: head.call.sampling.temperature,
    text: { format: b.text?.format ?? { type: 'text' } } as ResponseBody['text'],
    tool_choice: (typeof b.tool_choice === 'object' && b.tool_choice ? b.tool_choice : (b.tool_choice ?? 'auto')) as ResponseBody['tool_choice'],
    tools: (b.tools ?? []).map((t) => ({ type: 'function', name: t.name, description: t.description ?? null, parameters: t.parameters ?? null, strict: t.strict ?? null })) as ResponseBody['tools'],
    top_p: head.call.sampling.top_p,
    truncation: 'disabled',
    usage: extra.usage ? responseUsage(extra.usage, extra.reasoningTokens) : undefined,
    user: b.user ?? undefined,
    metadata: b.metadata ?? {},
  };
}
