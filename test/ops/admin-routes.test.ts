// The /admin/models routes in the router, over a recording ModelAdmin: admin keys
// only, the body checked, ids with a literal or %2F-encoded slash, and 404 where the
// runtime manages no models (the MSW and browser front doors).
import { describe, expect, it } from 'vitest';
import type { ModelState } from '../../src/engine/protocol.js';
import type { AddModelRequest, ModelAdmin } from '../../src/types.js';
import { setup } from '../api/harness.js';
import { AUTH } from '../api/stub-access.js';

const state = (id: string, status: ModelState['status']): ModelState => ({
  id, task: 'chat', class: '7B', context_length: 2048, status, created: 1, owned_by: 'hearth',
});

function withAdmin(isAdmin = true) {
  const h = setup();
  const calls: unknown[][] = [];
  const admin: ModelAdmin = {
    add: async (r: AddModelRequest) => (calls.push(['add', r]), state(r.id, 'starting')),
    remove: async (id) => void calls.push(['remove', id]),
    redeploy: async (id) => (calls.push(['redeploy', id]), state(id, 'redeploying')),
    list: async () => [state('svc/a', 'ready')],
  };
  h.runtime.admin = admin;
  (h.access.principal as { admin: boolean }).admin = isAdmin;
  return { ...h, calls };
}

describe('/admin/models routes', () => {
  it('404 unknown_url where the runtime has no model operations', async () => {
    const h = setup();
    (h.access.principal as { admin: boolean }).admin = true;
    const res = await h.post('/admin/models', { id: 'svc/x', from: '/m' });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unknown_url');
  });

  it('403 permission_denied for a key that is not an admin key, before anything runs', async () => {
    const { post, fetch, calls } = withAdmin(false);
    for (const res of [
      await post('/admin/models', { id: 'svc/x', from: '/m' }),
      await post('/admin/models/svc/x/redeploy', {}),
      await fetch('/admin/models/svc%2Fx', { method: 'DELETE', headers: AUTH }),
      await fetch('/admin/models', { headers: AUTH }),
    ]) {
      expect(res.status).toBe(403);
      expect(((await res.json()) as { error: unknown }).error).toMatchObject({ type: 'invalid_request_error', code: 'permission_denied' });
    }
    expect(calls).toEqual([]);
  });

  it('adds (201), redeploys (202) and removes (200) with ids written either way', async () => {
    const { post, fetch, calls } = withAdmin();
    const add = await post('/admin/models', { id: 'svc/x', from: '/models/x', task: 'chat', price: { input_per_1m: 1, output_per_1m: 2 } });
    expect(add.status).toBe(201);
    expect(await add.json()).toMatchObject({ id: 'svc/x', object: 'model', status: 'starting', detail: null });
    const rd1 = await post('/admin/models/svc/x/redeploy', {});
    const rd2 = await post('/admin/models/svc%2Fx/redeploy', {});
    expect([rd1.status, rd2.status]).toEqual([202, 202]);
    expect(((await rd1.json()) as { status: string }).status).toBe('redeploying');
    const del = await fetch('/admin/models/svc%2Fx', { method: 'DELETE', headers: AUTH });
    expect(await del.json()).toEqual({ id: 'svc/x', object: 'model', deleted: true });
    const list = (await (await fetch('/admin/models', { headers: AUTH })).json()) as { data: { id: string }[] };
    expect(list.data.map((m) => m.id)).toEqual(['svc/a']);
    expect(calls).toEqual([
      ['add', { id: 'svc/x', from: '/models/x', task: 'chat', price: { input_per_1m: 1, output_per_1m: 2 } }],
      ['redeploy', 'svc/x'],
      ['redeploy', 'svc/x'],
      ['remove', 'svc/x'],
    ]);
  });

  it('checks the body: ids look like svc/NAME, from is required, fields have their types', async () => {
    const { post, calls } = withAdmin();
    const cases: [unknown, string][] = [
      [{ id: 'x', from: '/m' }, 'id'],
      [{ id: 'svc/x' }, 'from'],
      [{ id: 'svc/x', from: '/m', task: 'vision' }, 'task'],
      [{ id: 'svc/x', from: '/m', context_length: -1 }, 'context_length'],
    ];
    for (const [body, param] of cases) {
      const res = await post('/admin/models', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(((await res.json()) as { error: { param: string } }).error.param).toBe(param);
    }
    expect((await post('/admin/models/svc/x/undeploy', {})).status).toBe(404);
    expect(calls).toEqual([]);
  });

  it('takes a dtype for some devices only (the others use fp32), and refuses an unknown device', async () => {
    const { post, calls } = withAdmin();
    expect((await post('/admin/models', { id: 'svc/x', from: '/m', dtype: { webgpu: 'q4f16' } })).status).toBe(201);
    expect(calls).toEqual([['add', { id: 'svc/x', from: '/m', dtype: { webgpu: 'q4f16' } }]]);
    const bad = await post('/admin/models', { id: 'svc/y', from: '/m', dtype: { tpu: 'fp32' } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { param: string } }).error.param).toBe('dtype');
  });
});
