// Model operations on a real server: add from a local folder (served without a
// restart, persisted in the data dir), checkpoint errors, redeploy with a request in
// flight, remove, admin-key checks, and the same through the CLI (--url and without).
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtures } from '../helpers/fixtures.js';
import { createKey, startServer, waitReady, type TestServer } from '../helpers/server.js';
import { CLI } from '../helpers/cli.js';

const run = promisify(execFile);
const cli = (args: string[], env: Record<string, string> = {}) =>
  run(process.execPath, [...CLI, ...args], { env: { ...process.env, ...env } }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e) => ({ code: e.code as number, stdout: e.stdout as string, stderr: e.stderr as string }),
  );

let dir: string;
let server: TestServer;
let admin: string;
let user: string;
let myChat: string;

const api = (path: string, key: string | undefined, init: RequestInit = {}) =>
  fetch(`${server.url}${path}`, {
    ...init,
    headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), 'content-type': 'application/json', ...(init.headers ?? {}) },
  });
const post = (path: string, key: string | undefined, body?: unknown) =>
  api(path, key, { method: 'POST', ...(body ? { body: JSON.stringify(body) } : {}) });
const chat = (model: string) =>
  post('/v1/chat/completions', user, { model, messages: [{ role: 'user', content: 'Hello!' }], temperature: 0 });
const health = async () => ((await (await fetch(`${server.url}/health`)).json()) as { models: Record<string, string> }).models;

async function untilStatus(id: string, want: string, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while ((await health())[id] !== want) {
    if (Date.now() > end) throw new Error(`${id} never became ${want}: ${JSON.stringify(await health())}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  dir = await fixtures();
  const dataDir = await mkdtemp(join(tmpdir(), 'hearth-admin-'));
  admin = await createKey(dataDir, ['--admin', '--name', 'ops']);
  user = await createKey(dataDir, ['--name', 'dev', '--rate-limit', '1000']);
  myChat = await mkdtemp(join(tmpdir(), 'hearth-mychat-'));
  await cp(join(dir, 'tiny-chat'), myChat, { recursive: true });
  server = await startServer(['--rate-limit', '1000'], dataDir);
  await waitReady(server.url);
});
afterAll(async () => {
  expect(await server.stop('SIGTERM')).toBe(0);
});

describe('/admin/models', () => {
  it('refuses without a key (401) and with a non-admin key (403 permission_denied)', async () => {
    expect((await post('/admin/models', undefined, { id: 'svc/x', from: myChat })).status).toBe(401);
    const res = await post('/admin/models', user, { id: 'svc/x', from: myChat });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { code: string } }).error).toMatchObject({ code: 'permission_denied', type: 'invalid_request_error' });
    expect((await api('/admin/models/svc%2Ftiny-chat', user, { method: 'DELETE' })).status).toBe(403);
    expect((await post('/admin/models/svc/tiny-chat/redeploy', user)).status).toBe(403);
  });

  it('adds a model from a local folder: served without a restart, in /v1/models, /health, /status and the data dir catalog', async () => {
    const res = await post('/admin/models', admin, { id: 'svc/my-chat', from: myChat, price: { input_per_1m: 1, output_per_1m: 2 } });
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ id: 'svc/my-chat', object: 'model', task: 'chat', class: expect.any(String), context_length: 2048 });
    await untilStatus('svc/my-chat', 'ready');
    const r = await chat('svc/my-chat');
    expect(r.status).toBe(200);
    const listed = (await (await api('/v1/models', user)).json()) as { data: { id: string; status: string }[] };
    expect(listed.data).toContainEqual(expect.objectContaining({ id: 'svc/my-chat', status: 'ready' }));
    expect(await (await fetch(`${server.url}/status`)).text()).toContain('svc/my-chat');
    const saved = JSON.parse(await readFile(join(server.dataDir, 'catalog.json'), 'utf8'));
    expect(saved.models).toContainEqual(expect.objectContaining({ id: 'svc/my-chat', source: myChat }));
    // The same id again is refused.
    const dup = await post('/admin/models', admin, { id: 'svc/my-chat', from: myChat });
    expect(dup.status).toBe(400);
  });

  it('refuses a checkpoint with a clear error naming what is missing', async () => {
    const broken = await mkdtemp(join(tmpdir(), 'hearth-broken-'));
    await cp(join(dir, 'tiny-chat'), broken, { recursive: true });
    await rm(join(broken, 'tokenizer.json'));
    await rm(join(broken, 'onnx'), { recursive: true });
    const res = await post('/admin/models', admin, { id: 'svc/broken', from: broken });
    expect(res.status).toBe(400);
    const { error } = (await res.json()) as { error: { code: string; message: string; param: string } };
    expect(error.code).toBe('invalid_checkpoint');
    expect(error.param).toBe('from');
    expect(error.message).toContain('tokenizer.json is missing');
    expect(error.message).toContain('onnx/model.onnx');
    expect((await health())['svc/broken']).toBeUndefined();
    const bad = await post('/admin/models', admin, { id: 'not-svc', from: myChat });
    expect(bad.status).toBe(400);
  });

  it('redeploys: redeploying in /v1/models and /health, new requests 503 with retry-after, the stream in flight finishes, then ready', async () => {
    const streamRes = await post('/generate', user, {
      model: 'svc/my-chat',
      text: 'Once upon a time',
      stream: true,
      sampling_params: { max_new_tokens: 1500, ignore_eos: true, temperature: 0 },
    });
    expect(streamRes.status).toBe(200);
    const reader = streamRes.body!.getReader();
    await reader.read(); // it has started
    const rd = await post('/admin/models/svc/my-chat/redeploy', admin);
    expect(rd.status).toBe(202);
    expect(((await rd.json()) as { status: string }).status).toBe('redeploying');
    expect((await health())['svc/my-chat']).toBe('redeploying');
    const m = (await (await api('/v1/models/svc%2Fmy-chat', user)).json()) as { status: string };
    expect(m.status).toBe('redeploying');
    const refused = await chat('svc/my-chat');
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('model_not_ready');
    // The in-flight stream runs to its length on the old instance.
    let text = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    const events = text.split('\n\n').filter((f) => f.startsWith('data: {'));
    const last = JSON.parse(events.at(-1)!.slice(6)) as { meta_info: { finish_reason: { type: string }; completion_tokens: number } };
    expect(last.meta_info.finish_reason.type).toBe('length');
    expect(last.meta_info.completion_tokens).toBe(1500);
    await untilStatus('svc/my-chat', 'ready');
    expect((await chat('svc/my-chat')).status).toBe(200);
  });

  it('removes a model: 404 afterwards, and gone from the data dir catalog', async () => {
    const res = await api('/admin/models/svc%2Fmy-chat', admin, { method: 'DELETE' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: 'svc/my-chat', object: 'model', deleted: true });
    expect((await chat('svc/my-chat')).status).toBe(404);
    expect((await health())['svc/my-chat']).toBeUndefined();
    const saved = JSON.parse(await readFile(join(server.dataDir, 'catalog.json'), 'utf8'));
    expect(saved.models.map((e: { id: string }) => e.id)).not.toContain('svc/my-chat');
    expect((await api('/admin/models/svc%2Fmy-chat', admin, { method: 'DELETE' })).status).toBe(404);
  });
});

describe('hearth models add|redeploy|remove', () => {
  it('with --url and an admin key acts on the running server', async () => {
    const add = await cli(['models', 'add', '--id', 'svc/cli-chat', '--from', myChat, '--url', server.url, '--key', admin, '--wait']);
    expect(add.code, add.stderr).toBe(0);
    expect(add.stdout).toContain('svc/cli-chat: ready');
    expect((await chat('svc/cli-chat')).status).toBe(200);
    const rd = await cli(['models', 'redeploy', 'svc/cli-chat', '--url', server.url, '--key', admin, '--wait']);
    expect(rd.code, rd.stderr).toBe(0);
    expect(rd.stdout).toMatch(/svc\/cli-chat: redeploying[\s\S]*svc\/cli-chat: ready/);
    const rm1 = await cli(['models', 'remove', 'svc/cli-chat', '--url', server.url, '--key', admin]);
    expect(rm1.code, rm1.stderr).toBe(0);
    expect((await health())['svc/cli-chat']).toBeUndefined();
    const denied = await cli(['models', 'remove', 'svc/tiny-chat', '--url', server.url, '--key', user]);
    expect(denied.code).toBe(1);
    expect(denied.stderr).toContain('permission_denied');
  });

  it('without --url edits the served catalog in the data dir, which the running server applies', async () => {
    const add = await cli(['models', 'add', '--id', 'svc/file-chat', '--from', myChat, '--data-dir', server.dataDir]);
    expect(add.code, add.stderr).toBe(0);
    const listed = await cli(['models', 'list', '--data-dir', server.dataDir, '--json']);
    expect(JSON.parse(listed.stdout)).toContainEqual(expect.objectContaining({ id: 'svc/file-chat', source: myChat, local: true }));
    await untilStatus('svc/file-chat', 'ready');
    const remote = await cli(['models', 'list', '--url', server.url, '--key', admin]);
    expect(remote.stdout).toMatch(/svc\/file-chat\s+chat\s+\S+\s+2048\s+ready/);
    expect((await chat('svc/file-chat')).status).toBe(200);
    const rd = await cli(['models', 'redeploy', 'svc/file-chat', '--data-dir', server.dataDir]);
    expect(rd.code, rd.stderr).toBe(0);
    await untilStatus('svc/file-chat', 'ready');
    const rm1 = await cli(['models', 'remove', 'svc/file-chat', '--data-dir', server.dataDir]);
    expect(rm1.code, rm1.stderr).toBe(0);
    const end = Date.now() + 10_000;
    while ((await health())['svc/file-chat'] !== undefined && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
    expect((await health())['svc/file-chat']).toBeUndefined();
    const bad = await cli(['models', 'add', '--id', 'svc/nope', '--from', join(tmpdir(), 'no-such-folder-hearth'), '--data-dir', server.dataDir]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('the folder does not exist');
  });

  it('a model added while running is still served after a restart; a removed one stays removed', async () => {
    const add = await post('/admin/models', admin, { id: 'svc/kept', from: myChat });
    expect(add.status).toBe(201);
    await untilStatus('svc/kept', 'ready');
    expect((await api('/admin/models/svc%2Ftiny-embed', admin, { method: 'DELETE' })).status).toBe(200);
    expect(await server.stop('SIGTERM')).toBe(0);
    server = await startServer(['--rate-limit', '1000'], server.dataDir);
    await waitReady(server.url);
    const h = await health();
    expect(h['svc/kept']).toBe('ready');
    expect(h['svc/tiny-embed']).toBeUndefined();
    expect(h['svc/tiny-chat']).toBe('ready');
  });
});
