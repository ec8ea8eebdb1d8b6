// The access layer's stored responses keep to their retention: each account its newest
// `perAccount`, none past `maxAgeMs` (not served at once, swept from the store later).
import { afterEach, describe, expect, it } from 'vitest';
import { createAccess, type HearthAccess } from '../../src/access/access.js';
import { createMemoryStore } from '../../src/access/memory-store.js';
import type { Principal } from '../../src/access/types.js';

const T0 = Date.UTC(2026, 10, 15, 12);
const DAY = 86_400_000;
const alice: Principal = { keyId: 'key_a', accountId: 'acct_a', accountName: 'alice', admin: false, sandbox: false };
const bob: Principal = { ...alice, keyId: 'key_b', accountId: 'acct_b', accountName: 'bob' };

const response = (id: string, created: number) => ({ id, created, response: { id, object: 'response' }, input_items: [] });

let access: HearthAccess | undefined;
afterEach(async () => {
  await access?.close();
});

describe('stored response retention', () => {
  it('keeps each account its newest responses, up to perAccount', async () => {
    let now = T0;
    access = createAccess({ store: createMemoryStore(), now: () => now, responseRetention: { perAccount: 2 } });
    for (const id of ['resp_1', 'resp_2', 'resp_3']) {
      await access.responses.put(alice, response(id, (now += 1000)));
    }
    await access.responses.put(bob, response('resp_b', (now += 1000)));
    expect(await access.responses.get(alice, 'resp_1')).toBeUndefined();
    expect((await access.responses.get(alice, 'resp_2'))?.id).toBe('resp_2');
    expect((await access.responses.get(alice, 'resp_3'))?.id).toBe('resp_3');
    expect((await access.responses.get(bob, 'resp_b'))?.account_id).toBe('acct_b');
  });

  it('serves none past maxAgeMs, and sweeps them from the store', async () => {
    let now = T0;
    const store = createMemoryStore();
    access = createAccess({ store, now: () => now, responseRetention: { maxAgeMs: 2 * DAY } });
    await access.responses.put(alice, response('resp_old', now));
    await access.responses.put(alice, response('resp_new', now + DAY));
    now += 2 * DAY + 1;
    expect(await access.responses.get(alice, 'resp_old')).toBeUndefined();
    expect(await access.responses.get(alice, 'resp_new')).toBeDefined();
    // An access layer opening the store sweeps it when it starts (and hourly after).
    const again = createAccess({ store, now: () => now, responseRetention: { maxAgeMs: 2 * DAY } });
    await new Promise((r) => setTimeout(r, 0));
    expect(await store.getResponse('resp_old', 'acct_a')).toBeUndefined();
    expect(await store.getResponse('resp_new', 'acct_a')).toBeDefined();
    await again.close();
  });

  it('serves no item of a response past maxAgeMs (item_reference), nor another account\'s', async () => {
    let now = T0;
    access = createAccess({ store: createMemoryStore(), now: () => now, responseRetention: { maxAgeMs: 2 * DAY } });
    const withItem = (id: string, created: number) => ({ ...response(id, created), input_items: [{ id: `msg_${id}`, type: 'message', role: 'user', content: 'Hi' }] });
    await access.responses.put(alice, withItem('resp_old', now));
    await access.responses.put(alice, withItem('resp_new', now + DAY));
    expect(await access.responses.item(alice, 'msg_resp_old')).toMatchObject({ id: 'msg_resp_old', role: 'user' });
    expect(await access.responses.item(bob, 'msg_resp_old')).toBeUndefined();
    now += 2 * DAY + 1;
    expect(await access.responses.item(alice, 'msg_resp_old')).toBeUndefined();
    expect(await access.responses.item(alice, 'msg_resp_new')).toMatchObject({ id: 'msg_resp_new' });
  });

  it('refuses a retention that keeps nothing', () => {
    expect(() => createAccess({ store: createMemoryStore(), responseRetention: { perAccount: 0 } })).toThrow(RangeError);
    expect(() => createAccess({ store: createMemoryStore(), responseRetention: { maxAgeMs: 0 } })).toThrow(RangeError);
  });
});
