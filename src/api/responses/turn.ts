// One turn of a Responses conversation: what it continues (previous_response_id: the
// stored conversation of that response, the caller's own only), the items it names by
// id (item_reference: an item of one of the caller's stored responses, expanded as if it
// had been sent inline), and how its answer is kept (`store`, default true) with the
// items that led to it. Shared by local and upstream models.
import type { ResponseItem } from 'openai/resources/responses/responses';
import type { Access, Principal } from '../../access/types.js';
import { ApiError } from '../errors.js';
import { parseBody } from '../schemas/common.js';
import { inputItems, type InputItem, type ResponsesRequest } from '../schemas/responses.js';
import { CONVERSATION_TYPES, conversationAfter, joinConversation, listed, listedInput } from './items.js';
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

/** OpenAI's answer to an item id it has not stored (a 404 naming `input`, with no code);
 * another account's item, or one whose responses were deleted or expired, is the same. */
const itemNotFound = (id: string) =>
  new ApiError(
    404,
    'invalid_request_error',
    null,
    `Item with id '${id}' not found. Items are kept with the stored responses of the account that made them (not with \`store: false\`) until those responses are deleted or expire.`,
    'input',
  );

/** The request's own items, each reference replaced by the item it names (an item a client
 * sends back inline is dropped when it is a reasoning item: so is a referenced one). */
async function ownItems(access: Access, principal: Principal, input: ResponsesRequest['input']): Promise<ResponseItem[]> {
  if (typeof input === 'string') return listedInput(input);
  const found = await Promise.all(input.map((item) => (item.type === 'item_reference' ? access.responses?.item(principal, item.id) : undefined)));
  const out: ResponseItem[] = [];
  input.forEach((item, i) => {
    if (item.type !== 'item_reference') return void out.push(listed(item));
    const stored = found[i];
    if (!stored) throw itemNotFound(item.id);
    if (CONVERSATION_TYPES.has(String(stored.type))) out.push(stored as unknown as ResponseItem);
  });
  return out;
}

export async function beginTurn(access: Access, principal: Principal, body: ResponsesRequest): Promise<Turn> {
  const own: ResponseItem[] = await ownItems(access, principal, body.input);
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
