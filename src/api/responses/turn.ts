// One turn of a Responses conversation: what it continues (previous_response_id: the
// stored conversation of that response, the caller's own only) and how its answer is
// kept (`store`, default true) with the items that led to it. Shared by local and
// upstream models.
import type { ResponseItem } from 'openai/resources/responses/responses';
import type { Access, Principal } from '../../access/types.js';
import { ApiError } from '../errors.js';
import { parseBody } from '../schemas/common.js';
import { inputItems, type InputItem, type ResponsesRequest } from '../schemas/responses.js';
import { conversationAfter, joinConversation, listedInput } from './items.js';
import type { ResponseBody } from './object.js';

export interface Turn {
  /** The whole conversation as the engine reads input items. */
  input: InputItem[];
  /** The same, as stored and listed (each with its id). */
  items: Record<string, unknown>[];
  /** Keeps the final response with its items, unless the request said store: false. */
  keep(final: ResponseBody): Promise<void>;
}

/** OpenAI's answer to an id it has not stored (or that is another's). */
const previousNotFound = (id: string) =>
  new ApiError(400, 'invalid_request_error', 'previous_response_not_found', `Previous response with id '${id}' not found.`, 'previous_response_id');

export async function beginTurn(access: Access, principal: Principal, body: ResponsesRequest): Promise<Turn> {
  const own: ResponseItem[] = listedInput(body.input);
  let earlier: Record<string, unknown>[] = [];
  if (body.previous_response_id) {
    const prev = await access.responses?.get(principal, body.previous_response_id);
    if (!prev) throw previousNotFound(body.previous_response_id);
    earlier = conversationAfter(prev);
  }
  const items = joinConversation(earlier, own);
  const store = access.responses;
  return {
    input: parseBody(inputItems, items),
    items,
    async keep(final) {
      if (body.store === false || !store) return;
      await store.put(principal, { id: final.id, created: Date.now(), response: final as unknown as Record<string, unknown>, input_items: items });
    },
  };
}
