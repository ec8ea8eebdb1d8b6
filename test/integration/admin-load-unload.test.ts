// Loading and unloading by hand on a real server: the admin routes (an admin key; a user key
// gets 403), `hearth models load|unload` and `hearth ps` through them, an idle model unloading
// after --keep-alive, and a forced unload ending the stream it cuts with an SSE error event.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI } from '../helpers/cli.js';
import { chatBody, startOnDemand, untilStatus, type OnDemandServer } from '../helpers/on-demand-server.js';

const run = promisify(execFile);
const cli = (args: string[]) => run(process.execPath, [...CLI, ...args]).then((r) => r.stdout);

let s: OnDemandServer;
beforeAll(async () => {
  s = await startOnDemand(['--load', 'on-demand', '--keep-alive', '5s']);
});
afterAll(() => s?.stop());

describe('admin load and unload', () => {
  it('refuses a user key with 403 permission_denied on load and unload', async () => {
    for (const action of ['load', 'unload']) {
      const res = await s.post(`/admin/models/svc/tiny-chat/${action}`, {}, s.user);
      expect(res.status).toBe(403);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('permission_denied');
    }
    expect((await s.models())['svc/tiny-chat']!.status).toBe('unloaded');
  });

  it('loads a model on an admin load (answering once it is ready, expiring after the keep-alive) and unloads it on an admin unload', async () => {
    const res = await s.post('/admin/models/svc%2Ftiny-chat/load', {}, s.admin);
    expect(res.status).toBe(200);
    const loaded = (await res.json()) as { status: string; expires_at: number; size_mb: number };
    expect(loaded.status).toBe('ready');
    expect(loaded.expires_at).toBeGreaterThan(Date.now() / 1000);
    expect(loaded.size_mb).toBeGreaterThan(0);
    const gone = (await (await s.post('/admin/models/svc/tiny-chat/unload', {}, s.admin)).json()) as { status: string };
    expect(gone.status).toBe('unloaded');
    expect(await s.metric('hearth_model_unloads_total', { model: 'svc/tiny-chat', reason: 'admin' })).toBe(1);
    expect((await s.post('/admin/models/svc/nope/load', {}, s.admin)).status).toBe(404);
  });

  it('lists what is loaded with hearth ps, and loads and unloads with hearth models load|unload', async () => {
    const url = ['--url', s.server.url, '--key', s.admin];
    expect(await cli(['models', 'load', 'svc/tiny-embed', ...url])).toMatch(/svc\/tiny-embed: ready on http.*MiB/);
    const table = await cli(['ps', ...url]);
    expect(table.split('\n')[0]).toMatch(/^NAME\s+STATUS\s+SIZE\s+UNTIL/);
    expect(table).toMatch(/svc\/tiny-embed\s+ready\s+[\d.]+ MiB\s+\d+s from now/);
    expect(table).not.toMatch(/tiny-chat/);
    const rows = JSON.parse(await cli(['ps', ...url, '--json'])) as { id: string; status: string; size_mb: number; expires_at: number }[];
    expect(rows).toEqual([expect.objectContaining({ id: 'svc/tiny-embed', status: 'ready', in_flight: 0 })]);
    expect(await cli(['models', 'unload', 'svc/tiny-embed', ...url])).toMatch(/svc\/tiny-embed: unloaded/);
    expect(JSON.parse(await cli(['ps', ...url, '--json']))).toEqual([]);
  });

  it('unloads an idle model once --keep-alive has passed after its last request', async () => {
    expect((await s.post('/v1/embeddings', { model: 'svc/tiny-embed', input: 'x' })).status).toBe(200);
    expect((await s.models())['svc/tiny-embed']!.status).toBe('ready');
    await untilStatus(s, 'svc/tiny-embed', 'unloaded', 15_000);
    expect(await s.metric('hearth_model_unloads_total', { model: 'svc/tiny-embed', reason: 'idle' })).toBe(1);
  });

  it('answers a plain unload only once the stream in flight on the model has ended whole', async () => {
    const stream = await s.post('/v1/chat/completions', chatBody({ stream: true, max_tokens: 2000, ignore_eos: true }));
    const reader = stream.body!.getReader();
    await reader.read();
    let unloadedAt = 0;
    const unload = s.post('/admin/models/svc/tiny-chat/unload', {}, s.admin).then((r) => ((unloadedAt = Date.now()), r));
    let text = '';
    const decoder = new TextDecoder();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    const ended = Date.now();
    expect(text).toMatch(/"finish_reason":"length"/);
    expect(text).not.toMatch(/"error"/);
    expect((await unload).status).toBe(200);
    expect(unloadedAt).toBeGreaterThanOrEqual(ended - 50);
    expect((await s.models())['svc/tiny-chat']!.status).toBe('unloaded');
  });

  it('cuts a stream in flight with an SSE error event on an unload with force', async () => {
    const stream = await s.post('/v1/chat/completions', chatBody({ stream: true, max_tokens: 2000, ignore_eos: true }));
    const reader = stream.body!.getReader();
    await reader.read();
    const unloaded = await s.post('/admin/models/svc/tiny-chat/unload?force=true', {}, s.admin);
    expect(unloaded.status).toBe(200);
    let text = '';
    const decoder = new TextDecoder();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    expect(text).toMatch(/data: \{"error":\{[^\n]*"code":"model_not_ready"/);
    expect((await s.models())['svc/tiny-chat']!.status).toBe('unloaded');
  });
});
