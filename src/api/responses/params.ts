// A Responses request runs as a chat body (../schemas/responses.ts), so what refuses it
// there (the chat schema, a schema's limits, the tool choice, the engine) names chat
// fields. The client sent Responses fields: an error /v1/responses answers names those.
import { ApiError, mapError } from '../errors.js';

/** Chat field → the Responses field it was made from (the rest of the path kept). */
const FIELDS: [RegExp, string][] = [
  [/^response_format(\.json_schema)?(?=$|[.[])/, 'text.format'],
  [/^max_(completion_)?tokens$/, 'max_output_tokens'],
  [/^reasoning_effort$/, 'reasoning.effort'],
  [/^tools\[(\d+)\]\.function(?=$|[.[])/, 'tools[$1]'],
  [/^tool_choice\.function(?=$|[.[])/, 'tool_choice'],
];

/** Chat field names a message may mention in passing ("reduce the prompt or max_tokens"). */
const WORDS: [RegExp, string][] = [
  [/\bresponse_format\b/g, 'text.format'],
  [/\bmax_(completion_)?tokens\b/g, 'max_output_tokens'],
  [/\breasoning_effort\b/g, 'reasoning.effort'],
];

/**
 * The Responses name of a chat param. Messages are made from `input` items (function calls
 * in a row join one message, and a continued conversation's items come first), so a
 * message's path names `input` as a whole; the leading system message is `instructions`.
 */
export function responsesParam(param: string, hasInstructions: boolean): string {
  if (param === 'messages' || param.startsWith('messages[')) {
    return hasInstructions && /^messages\[0\](?=$|[.[])/.test(param) ? 'instructions' : 'input';
  }
  for (const [chat, responses] of FIELDS) if (chat.test(param)) return param.replace(chat, responses);
  return param;
}

function responsesMessage(message: string, from: string | null, to: string | null): string {
  let out = from && to && from !== to && from !== 'messages' ? message.split(from).join(to) : message;
  for (const [word, name] of WORDS) out = out.replace(word, name);
  return out;
}

/** The error as /v1/responses answers it: the envelope of the chat one, in Responses names.
 * Faults (500s) and cancellations are left as they are. */
export function asResponsesError(err: unknown, hasInstructions: boolean): unknown {
  const m = mapError(err);
  if (!m || m.internal) return err;
  const { type, code, message, param } = m.body.error;
  const named = param === null ? null : responsesParam(param, hasInstructions);
  return new ApiError(m.status, type, code, responsesMessage(message, param, named), named, m.headers);
}

/** A message sent after a stream began (no param there), in Responses names. */
export const responsesText = (message: string): string => responsesMessage(message, null, null);
