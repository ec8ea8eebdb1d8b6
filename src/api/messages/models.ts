// GET /v1/models (and /v1/models/{id}) asked by an Anthropic client (`anthropic-version`): the
// models /v1/messages serves, in Anthropic's shapes (`{type: "model", id, display_name,
// created_at}`, pages with has_more, first_id and last_id, paged by limit, after_id and before_id
// as Anthropic's SDK pages them).
import type { ModelState } from '../../engine/protocol.js';
import { invalidRequest } from '../errors.js';

export function anthropicModel(m: ModelState) {
  return { type: 'model' as const, id: m.id, display_name: m.id.replace(/^svc\//, ''), created_at: new Date(m.created * 1000).toISOString() };
}

/** Whether /v1/messages serves the model (its list holds these only). */
export const servesMessages = (m: ModelState) => m.task === 'chat';

export function anthropicModelList(models: ModelState[], query: URLSearchParams) {
  const limitText = query.get('limit');
  const limit = limitText === null ? 20 : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw invalidRequest('limit: must be an integer from 1 to 1000.', 'limit');
  const list = models.filter(servesMessages);
  const after = query.get('after_id');
  const before = query.get('before_id');
  const at = (id: string, param: string) => {
    const i = list.findIndex((m) => m.id === id);
    if (i < 0) throw invalidRequest(`${param}: no model \`${id}\` is listed.`, param);
    return i;
  };
  let page: ModelState[];
  let hasMore: boolean;
  if (before !== null) {
    const end = at(before, 'before_id');
    page = list.slice(Math.max(0, end - limit), end);
    hasMore = end - limit > 0;
  } else {
    const start = after === null ? 0 : at(after, 'after_id') + 1;
    page = list.slice(start, start + limit);
    hasMore = start + limit < list.length;
  }
  const data = page.map(anthropicModel);
  return { data, has_more: hasMore, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
}
