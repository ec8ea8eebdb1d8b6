// Adding hub models end to end against the local mirror (HF_ENDPOINT): the CLI
// downloads with progress into the data dir and a server then starts the model from
// disk with no hub reachable; a running server downloads a model added over HTTP,
// reports a cut download as failed with the reason, and a redeploy resumes it.
import { execFile } from 'node:child_process';
import { readFile, readdir } from 'node:fs/promises';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtures } from '../helpers/fixtures.js';
import { createKey, startServer, waitReady } from '../helpers/server.js';
import { hubCacheDir } from '../../src/paths.js';
import { startMirror, type Mirror } from './mirror.js';
import { CLI } from '../helpers/cli.js';

const run = promisify(execFile);
let mirror: Mirror;

beforeAll(async () => {
  mirror = await startMirror(await fixtures());
});
afterAll(() => mirror.close());

async function withEndpoint<T>(endpoint: string, fn: () => Promise<T>): Promise<T> {
  const before = process.env.HF_ENDPOINT;
  process.env.HF_ENDPOINT = endpoint;
  try {
    return await fn();
  } finally {
    if (before === undefined) delete process.env.HF_ENDPOINT;
    else process.env.HF_ENDPOINT = before;
  }
}

const health = async (url: string) => ((await (await fetch(`${url}/health`)).json()) as { models: Record<string, string> }).models;

describe('hub models', () => {
  it('hearth models add downloads from HF_ENDPOINT with progress; the server then serves it with no hub reachable', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'hearth-hubcli-'));
    const r = await run(
      process.execPath,
      [...CLI, 'models', 'add', '--id', 'svc/hub-chat', '--from', 'test-org/tiny-chat', '--data-dir', dataDir],
      { env: { ...process.env, HF_ENDPOINT: mirror.url } },
    );
    expect(r.stderr).toMatch(/downloaded onnx\/model\.onnx: 5\.8 MB in [\d.]+ s \([\d.]+ [kM]B\/s\)/);
    expect(r.stdout).toContain('Added svc/hub-chat (chat');
    expect(await readdir(join(hubCacheDir(), 'test-org', 'tiny-chat', 'onnx'))).toEqual(['model.onnx']);
    const saved = JSON.parse(await readFile(join(dataDir, 'catalog.json'), 'utf8'));
    expect(saved.models).toContainEqual(expect.objectContaining({ id: 'svc/hub-chat', source: 'test-org/tiny-chat', task: 'chat' }));

    const key = await createKey(dataDir);
    // A hub that does not answer: everything must come from the data dir.
    const server = await withEndpoint('http://127.0.0.1:9', () => startServer([], dataDir));
    try {
      await waitReady(server.url);
      const res = await fetch(`${server.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'svc/hub-chat', messages: [{ role: 'user', content: 'Hello!' }], temperature: 0 }),
      });
      expect(res.status).toBe(200);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  it('a running server downloads a model added over HTTP; a cut download fails the model with the reason; redeploy resumes it', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'hearth-hubsrv-'));
    const admin = await createKey(dataDir, ['--admin']);
    const server = await withEndpoint(mirror.url, () => startServer([], dataDir));
    const post = (path: string, body?: unknown) =>
      fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
    const until = async (id: string, want: string) => {
      const end = Date.now() + 30_000;
      while ((await health(server.url))[id] !== want) {
        if (Date.now() > end) throw new Error(`${id} never ${want}: ${JSON.stringify(await health(server.url))}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    try {
      await waitReady(server.url);
      mirror.cut.set('onnx/model.onnx', 1);
      const res = await post('/admin/models', { id: 'svc/hub-embed', from: 'test-org/tiny-embed' });
      expect(res.status).toBe(201);
      expect(await res.json()).toMatchObject({ id: 'svc/hub-embed', task: 'embedding', status: 'starting' });
      await until('svc/hub-embed', 'failed');
      const list = (await (await fetch(`${server.url}/admin/models`, { headers: { authorization: `Bearer ${admin}` } })).json()) as {
        data: { id: string; detail: string }[];
      };
      expect(list.data.find((m) => m.id === 'svc/hub-embed')!.detail).toMatch(/cut at \d+ of 2643005 bytes/);
      await new Promise((r) => setTimeout(r, 600)); // the state log polls twice a second
      const failedLine = server
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { msg?: string; model?: string; reason?: string; level?: string })
        .find((l) => l.msg === 'model failed' && l.model === 'svc/hub-embed');
      expect(failedLine).toMatchObject({ level: 'error', reason: expect.stringMatching(/cut at/) });
      const folder = join(hubCacheDir(), 'test-org', 'tiny-embed', 'onnx');
      expect(await readdir(folder)).toEqual(['model.onnx.partial']);

      const from = mirror.log.length;
      expect((await post('/admin/models/svc%2Fhub-embed/redeploy')).status).toBe(202);
      await until('svc/hub-embed', 'ready');
      expect(mirror.log.slice(from).some((l) => l.path.endsWith('onnx/model.onnx') && /^bytes=[1-9]/.test(l.range ?? ''))).toBe(true);
      expect(await readdir(folder)).toEqual(['model.onnx']);
      const user = await createKey(dataDir);
      const emb = await fetch(`${server.url}/v1/embeddings`, {
        method: 'POST',
        headers: { authorization: `Bearer ${user}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'svc/hub-embed', input: 'hello', encoding_format: 'float' }),
      });
      expect(emb.status).toBe(200);
      expect(((await emb.json()) as { data: { embedding: number[] }[] }).data[0]!.embedding).toHaveLength(1536);

      // The CLI against the running server: it waits for the hub model to be ready.
      const cli = await run(process.execPath, [
        ...CLI, 'models', 'add', '--id', 'svc/hub-chat2', '--from', 'test-org/tiny-chat', '--url', server.url, '--key', admin,
      ]);
      expect(cli.stdout).toMatch(/svc\/hub-chat2: added on .*\n[\s\S]*svc\/hub-chat2: ready/);
      expect((await health(server.url))['svc/hub-chat2']).toBe('ready');

      const bad = await post('/admin/models', { id: 'svc/nothing', from: 'test-org/does-not-exist' });
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { error: { message: string } }).error.message).toContain('config.json');
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});
