// `hearth serve --models` takes what `vllm serve org/name` users type first: a checkpoint
// folder or a hub repo id beside catalog ids. Each is served as svc/<its name> and
// remembered in the data dir's served catalog; a hub repo downloads first, with progress;
// a hub that cannot be reached is one clear line.
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtures } from '../helpers/fixtures.js';
import { freePort } from '../helpers/ports.js';
import { createKey, startServer, type TestServer } from '../helpers/server.js';
import { startMirror, type Mirror } from '../hub/mirror.js';
import { CLI } from '../helpers/cli.js';

const run = promisify(execFile);
const CHAT = { messages: [{ role: 'user' as const, content: 'Hello!' }], temperature: 0, max_tokens: 12 };

let fixturesDir: string;
let standIns: string;
let mirror: Mirror;
const servers: TestServer[] = [];

beforeAll(async () => {
  fixturesDir = await fixtures();
  // The mirror serves a copy of tiny-chat as test-org/hub-chat.
  standIns = mkdtempSync(join(tmpdir(), 'hearth-standins-'));
  cpSync(join(fixturesDir, 'tiny-chat'), join(standIns, 'hub-chat'), { recursive: true });
  mirror = await startMirror(standIns);
}, 120_000);

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  await mirror?.close();
});

async function ids(server: TestServer, key: string): Promise<string[]> {
  const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: key });
  return (await client.models.list()).data.map((m) => m.id).sort();
}

async function greedy(server: TestServer, key: string, model: string): Promise<string> {
  const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: key });
  return (await client.chat.completions.create({ model, ...CHAT })).choices[0]!.message.content!;
}

describe('hearth serve --models with folders and hub repo ids', () => {
  it('serves a checkpoint folder as svc/<folder name>, alone, and again on the next start without --models', async () => {
    const folder = join(mkdtempSync(join(tmpdir(), 'hearth-folder-')), 'my-chat');
    cpSync(join(fixturesDir, 'tiny-chat'), folder, { recursive: true });
    const dataDir = mkdtempSync(join(tmpdir(), 'hearth-sources-'));
    const key = await createKey(dataDir);
    const first = await startServer(['--models', folder], dataDir);
    servers.push(first);
    expect(await ids(first, key)).toEqual(['svc/my-chat']);
    const text = await greedy(first, key, 'svc/my-chat');
    await first.stop();

    const saved = JSON.parse(readFileSync(join(dataDir, 'catalog.json'), 'utf8')) as { models: { id: string; source: string }[] };
    expect(saved.models).toContainEqual(expect.objectContaining({ id: 'svc/my-chat', source: folder }));
    const second = await startServer([], dataDir);
    servers.push(second);
    expect(await ids(second, key)).toContain('svc/my-chat');
    expect(await greedy(second, key, 'svc/my-chat')).toBe(text);
  }, 120_000);

  it('downloads a hub repo id from HF_ENDPOINT with a progress line per file, then serves it as svc/<repo name>', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'hearth-sources-'));
    const key = await createKey(dataDir);
    const before = process.env.HF_ENDPOINT;
    process.env.HF_ENDPOINT = mirror.url;
    try {
      const server = await startServer(['--models', 'test-org/hub-chat,svc/tiny-embed'], dataDir);
      servers.push(server);
      expect(server.output()).toMatch(/downloaded onnx\/model\.onnx: 5\.8 MB in [\d.]+ s/);
      expect(mirror.log.some((l) => l.path === '/test-org/hub-chat/resolve/main/onnx/model.onnx')).toBe(true);
      expect(await ids(server, key)).toEqual(['svc/hub-chat', 'svc/tiny-embed']);
      expect((await greedy(server, key, 'svc/hub-chat')).length).toBeGreaterThan(0);
    } finally {
      if (before === undefined) delete process.env.HF_ENDPOINT;
      else process.env.HF_ENDPOINT = before;
    }
  }, 120_000);

  it('says in one line that the hub cannot be reached, and exits 1', async () => {
    const port = await freePort();
    const dataDir = mkdtempSync(join(tmpdir(), 'hearth-sources-'));
    const failed = await run(process.execPath, [...CLI, 'serve', '--port', '0', '--data-dir', dataDir, '--models', 'test-org/elsewhere'], {
      env: { ...process.env, HF_ENDPOINT: `http://127.0.0.1:${port}` },
    }).then(
      () => undefined,
      (err: { code: number; stderr: string }) => err,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr.trim()).toMatch(
      new RegExp(`^hearth: --models test-org/elsewhere: the hub at http://127\\.0\\.0\\.1:${port}/ cannot be reached \\(ECONNREFUSED\\); set HF_ENDPOINT`),
    );
    expect(failed?.stderr.trim().split('\n')).toHaveLength(1);
  }, 60_000);

  it('refuses a folder whose name is already a catalog id, naming the command that adds it under another id', async () => {
    const folder = join(mkdtempSync(join(tmpdir(), 'hearth-folder-')), 'tiny-chat');
    cpSync(join(fixturesDir, 'tiny-chat'), folder, { recursive: true });
    const dataDir = mkdtempSync(join(tmpdir(), 'hearth-sources-'));
    const failed = await run(process.execPath, [...CLI, 'serve', '--port', '0', '--data-dir', dataDir, '--models', folder]).then(
      () => undefined,
      (err: { code: number; stderr: string }) => err,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toContain(`--models ${folder}: svc/tiny-chat is already a model of the catalog; add it under another id with \`hearth models add --id svc/NAME --from ${folder}\``);
  }, 60_000);
});
