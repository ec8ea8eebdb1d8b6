// A response that cannot be stored is not answered as if it were: with the router over the
// stub engine (a router unit test, no model) and an access layer whose store is away, a
// plain request answers 503 store_unavailable and is charged nothing, and a stream ends
// with response.failed instead of response.completed.
import { describe, expect, test } from 'vitest';
import { storeUnavailable, type StoredResponses } from '../../src/access/types.js';
import { setup } from './harness.js';

function withStoreAway() {
  const s = setup();
  const away: StoredResponses = {
    put: async () => {
      throw storeUnavailable();
    },
    get: async () => undefined,
    delete: async () => false,
    item: async () => undefined,
  };
  Object.assign(s.access, { responses: away });
  return s;
}

const body = { model: 'svc/tiny-chat', input: 'Say hello' };

describe('the Responses API with the store away', () => {
  test('a plain request answers 503 store_unavailable, charges nothing and frees its hold', async () => {
    const { post, access } = withStoreAway();
    const res = await post('/v1/responses', body);
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('store_unavailable');
    expect(access.records).toEqual([]);
    expect(access.holds.every((h) => h.settled)).toBe(true);
  });

  test('a stream ends with response.failed naming the store, never response.completed', async () => {
    const { post } = withStoreAway();
    const text = await (await post('/v1/responses', { ...body, stream: true })).text();
    const types = [...text.matchAll(/^event: (\S+)$/gm)].map((m) => m[1]);
    expect(types).toContain('response.output_text.delta');
    expect(types).not.toContain('response.completed');
    expect(types.at(-1)).toBe('response.failed');
    expect(text).toMatch(/access store/);
  });

  test('a request with store: false is answered', async () => {
    const { post } = withStoreAway();
    expect((await post('/v1/responses', { ...body, store: false })).status).toBe(200);
  });
});
