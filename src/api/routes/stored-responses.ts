// GET /v1/responses/{id}, DELETE /v1/responses/{id} and
// GET /v1/responses/{id}/input_items: the caller's account's stored responses. An id
// that is unknown, past its retention or another account's is the same 404.
import type { ResponseItemList } from 'openai/resources/responses/input-items';
import type { ResponseItem } from 'openai/resources/responses/responses';
import type { StoredResponse } from '../../access/store.js';
import type { Ctx, RouteDeps } from '../context.js';
import { ApiError, invalidRequest, jsonResponse } from '../errors.js';

const notFound = (id: string) => new ApiError(404, 'invalid_request_error', 'response_not_found', `Response with id '${id}' not found.`, null);

async function stored(deps: RouteDeps, c: Ctx): Promise<StoredResponse> {
  const id = c.req.param('id')!;
  const r = await deps.runtime.access.responses?.get(c.get('principal'), id);
  if (!r) throw notFound(id);
  return r;
}

export function getResponse(deps: RouteDeps) {
  return async (c: Ctx): Promise<Response> => {
    if (c.req.query('stream') === 'true') {
      throw invalidRequest('Streaming a stored response again is not supported; retrieve it without `stream`.', 'stream');
    }
    return jsonResponse((await stored(deps, c)).response);
  };
}

export function deleteResponse(deps: RouteDeps) {
  return async (c: Ctx): Promise<Response> => {
    const id = c.req.param('id')!;
    if (!(await deps.runtime.access.responses?.delete(c.get('principal'), id))) throw notFound(id);
    return jsonResponse({ id, object: 'response', deleted: true });
  };
}

/** `limit` 1 to 100 (default 20), `order` asc or desc (default desc: the newest item first), `after` an item id. */
function pageQuery(c: Ctx): { limit: number; order: 'asc' | 'desc'; after?: string } {
  const rawLimit = c.req.query('limit');
  const limit = rawLimit === undefined ? 20 : Number(rawLimit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw invalidRequest(`limit must be an integer from 1 to 100 (got '${rawLimit}').`, 'limit');
  const order = c.req.query('order') ?? 'desc';
  if (order !== 'asc' && order !== 'desc') throw invalidRequest(`order must be 'asc' or 'desc' (got '${order}').`, 'order');
  return { limit, order, after: c.req.query('after') };
}

export function listInputItems(deps: RouteDeps) {
  return async (c: Ctx): Promise<Response> => {
    const q = pageQuery(c);
    const items = (await stored(deps, c)).input_items as unknown as ResponseItem[];
    const ordered = q.order === 'asc' ? items : [...items].reverse();
    let start = 0;
    if (q.after !== undefined) {
      const at = ordered.findIndex((i) => i.id === q.after);
      if (at < 0) throw invalidRequest(`No input item with id '${q.after}' in this response.`, 'after');
      start = at + 1;
    }
    const data = ordered.slice(start, start + q.limit);
    // A page past the last item has no ids to name: empty strings, as the schema wants strings.
    const list: ResponseItemList = {
      object: 'list',
      data,
      first_id: data[0]?.id ?? '',
      last_id: data.at(-1)?.id ?? '',
      has_more: start + q.limit < ordered.length,
    };
    return jsonResponse(list);
  };
}
