// Errors as Anthropic's API sends them, on the Messages routes (and /v1/models asked with
// `anthropic-version`): `{type: "error", error: {type, message}}`, the type read from the status
// (Anthropic's SDK and the AI SDK branch on both), and a `request-id` header (what Anthropic's SDK
// reads as a response's request id). The routes raise errors as every route does; one middleware
// turns the OpenAI envelope they become into Anthropic's, so refusals of the access gate, the body
// limit and unknown paths are answered the same way. Anthropic's envelope has no `param`: the
// message names the field instead.
import type { MiddlewareHandler } from 'hono';
import type { ApiEnv, Ctx } from '../context.js';
import { ApiError, mapError, type ErrorEnvelope } from '../errors.js';

export interface AnthropicError {
  type: 'error';
  error: { type: string; message: string };
}

/** Anthropic's error type for a status (503 stands where Anthropic's overloaded 529 would: a model starting). */
export function anthropicErrorType(status: number): string {
  switch (status) {
    case 401:
      return 'authentication_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 503:
      return 'overloaded_error';
    default:
      return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

/** Anthropic's envelope for an OpenAI one: the field named in the message where it is not already. */
export function anthropicEnvelope(status: number, body: ErrorEnvelope): AnthropicError {
  const { message, param } = body.error;
  const named = param && !message.includes(param) ? `${param}: ${message}` : message;
  return { type: 'error', error: { type: anthropicErrorType(status), message: named } };
}

/** The event a stream that failed after its headers ends with (`event: error`). */
export function errorEvent(err: unknown, requestId: string): AnthropicError {
  const m = mapError(asMessagesError(err), requestId);
  if (!m) return { type: 'error', error: { type: 'api_error', message: 'The request was cancelled.' } };
  return anthropicEnvelope(m.status, m.body);
}

/** Chat field → the Messages field it was made from (../schemas/messages.ts), the rest of the path kept. */
const FIELDS: [RegExp, string][] = [
  [/^max_(completion_)?tokens$/, 'max_tokens'],
  [/^tools\[(\d+)\]\.function\.parameters(?=$|[.[])/, 'tools[$1].input_schema'],
  [/^tools\[(\d+)\]\.function(?=$|[.[])/, 'tools[$1]'],
  [/^tool_choice\.function(?=$|[.[])/, 'tool_choice'],
  [/^response_format\.json_schema\.schema(?=$|[.[])/, 'output_config.format.schema'],
  [/^response_format(\.json_schema)?(?=$|[.[])/, 'output_config.format'],
  [/^user$/, 'metadata.user_id'],
  [/^reasoning_effort$/, 'thinking'],
];

/** Blocks become chat messages of their own: a chat message's index is not the request's. */
const CHAT_MESSAGES: [RegExp, string] = [/^messages(?=$|[.[]).*$/, 'messages'];

const WORDS: [RegExp, string][] = [
  [/\bmax_(completion_)?tokens\b/g, 'max_tokens'],
  [/\bresponse_format\b/g, 'output_config.format'],
  [/\breasoning_effort\b/g, 'thinking'],
];

/** `chatBody`: the param is a path in the chat body the request was made into (its messages
 * are not the request's), not in the request itself. */
export function messagesParam(param: string, chatBody = false): string {
  for (const [chat, messages] of chatBody ? [...FIELDS, CHAT_MESSAGES] : FIELDS) if (chat.test(param)) return param.replace(chat, messages);
  return param;
}

/** The error in the Messages request's own field names (faults and cancellations left as they are). */
export function asMessagesError(err: unknown, chatBody = false): unknown {
  const m = mapError(err);
  if (!m || m.internal) return err;
  const { type, code, message, param } = m.body.error;
  const named = param === null ? null : messagesParam(param, chatBody);
  let text = param && named && named !== param && named !== 'messages' ? message.split(param).join(named) : message;
  for (const [word, field] of WORDS) text = text.replace(word, field);
  return new ApiError(m.status, type, code, text, named, m.headers);
}

/** Sets headers even on a Response whose headers are immutable. */
function withHeader(c: Ctx, name: string, value: string): void {
  try {
    c.res.headers.set(name, value);
  } catch {
    const res = new Response(c.res.body, c.res);
    res.headers.set(name, value);
    c.res = res;
  }
}

/** Answers `isAnthropic` requests' errors in Anthropic's envelope, and every answer with `request-id`. */
export function anthropicErrors(isAnthropic: (c: Ctx) => boolean): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    if (!isAnthropic(c)) return next();
    await next();
    const res = c.res;
    if (res.status >= 400 && res.body && /application\/json/.test(res.headers.get('content-type') ?? '')) {
      const text = await res.text();
      let body: Partial<ErrorEnvelope> | undefined;
      try {
        body = JSON.parse(text) as Partial<ErrorEnvelope>;
      } catch {
        // not an envelope: sent on as it was
      }
      const envelope = body?.error && typeof body.error.message === 'string' ? anthropicEnvelope(res.status, body as ErrorEnvelope) : undefined;
      const headers = new Headers(res.headers);
      headers.delete('content-length');
      c.res = new Response(envelope ? JSON.stringify(envelope) : text, { status: res.status, headers });
    }
    withHeader(c, 'request-id', c.get('requestId'));
  };
}
