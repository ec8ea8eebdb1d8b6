// The `hearth` command as a real subprocess: the package's bin, on the build (helpers/cli.ts).

import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createAccess } from '../../src/access/access.js';
import { openFileStore } from '../../src/access/file-store.js';
import { CLI } from '../helpers/cli.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const KEY_LINE = /^svc_live_[0-9A-Za-z]{40}$/;

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function hearth(...args: string[]): Promise<Result> {
  return hearthWithInput(undefined, ...args);
}

function hearthWithInput(input: string | undefined, ...args: string[]): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = execFile(process.execPath, [...CLI, ...args], { cwd: ROOT, timeout: 30_000 }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') return reject(err);
      resolve({ code: err ? (err.code as number) : 0, stdout, stderr });
    });
    child.stdin!.end(input ?? '');
  });
}

const dirs: string[] = [];
function tempDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-cli-'));
  dirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

const lastLine = (s: string) => s.trimEnd().split('\n').at(-1)!;

describe('hearth keys', () => {
  it('create prints a well-formed key alone on the last line; list shows it without the key', async () => {
    const dir = tempDir();
    const r = await hearth('keys', 'create', '--data-dir', dir, '--name', 'alice', '--sandbox', '--rate-limit', '7');
    expect(r.code, r.stderr).toBe(0);
    const key = lastLine(r.stdout);
    expect(key).toMatch(KEY_LINE);
    const id = /\b(key_[0-9A-Za-z]{12})\b/.exec(r.stdout)![1]!;

    const list = await hearth('keys', 'list', '--data-dir', dir);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain(id);
    expect(list.stdout).toContain('alice');
    expect(list.stdout).toContain('7/min');
    expect(list.stdout).not.toContain(key);
    expect(list.stdout).not.toContain(key.slice(9));

    const json = await hearth('keys', 'list', '--data-dir', dir, '--json');
    expect(JSON.parse(json.stdout)).toMatchObject([{ id, name: 'alice', sandbox: true, admin: false, rate_limit: 7, revoked: false }]);
    expect(json.stdout).not.toContain(key);

    for (const f of fs.readdirSync(dir)) expect(fs.readFileSync(path.join(dir, f), 'utf8')).not.toContain(key);
  });

  it('revokes by key and by id; the store then refuses both', async () => {
    const dir = tempDir();
    const a = lastLine((await hearth('keys', 'create', '--data-dir', dir, '--name', 'a')).stdout);
    const bOut = (await hearth('keys', 'create', '--data-dir', dir, '--name', 'b', '--admin')).stdout;
    const b = lastLine(bOut);
    const bId = /\b(key_[0-9A-Za-z]{12})\b/.exec(bOut)![1]!;

    const byKey = await hearth('keys', 'revoke', a, '--data-dir', dir);
    expect(byKey.code, byKey.stderr).toBe(0);
    expect(byKey.stdout).not.toContain(a);
    const byId = await hearth('keys', 'revoke', '--data-dir', dir, bId);
    expect(byId.code, byId.stderr).toBe(0);
    expect(byId.stdout).toContain(bId);

    const list = await hearth('keys', 'list', '--data-dir', dir, '--json');
    expect((JSON.parse(list.stdout) as { revoked: boolean }[]).map((k) => k.revoked)).toEqual([true, true]);

    const access = createAccess({ store: openFileStore(dir) });
    for (const k of [a, b]) await expect(access.authenticate(`Bearer ${k}`)).rejects.toMatchObject({ status: 401 });
    await access.close();

    const c = lastLine((await hearth('keys', 'create', '--data-dir', dir, '--name', 'c')).stdout);
    const fromStdin = await hearthWithInput(c + '\n', 'keys', 'revoke', '-', '--data-dir', dir);
    expect(fromStdin.code, fromStdin.stderr).toBe(0);
    expect(fromStdin.stdout).toMatch(/Revoked key key_\w+ "c"/);

    const unknown = await hearth('keys', 'revoke', 'key_AAAAAAAAAAAA', '--data-dir', dir);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no key/);
    const missing = await hearth('keys', 'revoke', '--data-dir', dir);
    expect(missing.code).toBe(2);
  });
});

describe('hearth usage', () => {
  it('--json prints this month per account after usage recorded on the same data dir', async () => {
    const dir = tempDir();
    const created = await hearth('keys', 'create', '--data-dir', dir, '--name', 'alice', '--sandbox');
    const key = lastLine(created.stdout);
    await hearth('keys', 'create', '--data-dir', dir, '--name', 'bob');

    const access = createAccess({ store: openFileStore(dir) });
    const p = await access.authenticate(`Bearer ${key}`);
    await access.record(p, { model: 'svc/tiny-chat', prompt_tokens: 12, completion_tokens: 30, cost_usd: 0.0000132 });
    await access.record(p, { model: 'svc/tiny-chat', prompt_tokens: 8, completion_tokens: 10, cost_usd: 0.0000048 });
    await access.close();

    const r = await hearth('usage', '--data-dir', dir, '--json');
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([
      { name: 'alice', sandbox: true, requests: 2, prompt_tokens: 20, completion_tokens: 40, spend_usd: 0.000018 },
      { name: 'bob', sandbox: false, requests: 0, prompt_tokens: 0, completion_tokens: 0, spend_usd: 0 },
    ]);

    const table = await hearth('usage', '--data-dir', dir);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/alice\s+yes\s+2\s+20\s+40/);
  });

  it('prints an empty array for a data dir with nothing in it, creating nothing', async () => {
    const dir = path.join(tempDir(), 'absent');
    const r = await hearth('usage', '--data-dir', dir, '--json');
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([]);
    expect(fs.existsSync(dir)).toBe(false);
  });
});

describe('hearth models', () => {
  it('lists a catalog, saying whether each source folder exists', async () => {
    const dir = tempDir();
    fs.mkdirSync(path.join(dir, 'here'));
    const catalog = path.join(dir, 'catalog.json');
    const entry = (id: string, source: string) => ({
      id,
      task: 'chat',
      class: '7B',
      context_length: 4096,
      source,
      price: { input_per_1m: 0.1, output_per_1m: 0.4 },
    });
    fs.writeFileSync(catalog, JSON.stringify([entry('svc/here', './here'), entry('svc/away', './away')]));
    const r = await hearth('models', 'list', '--catalog', catalog, '--json');
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject([
      { id: 'svc/here', task: 'chat', class: '7B', context_length: 4096, local: true },
      { id: 'svc/away', local: false },
    ]);
    const t = await hearth('models', 'list', '--catalog', catalog);
    expect(t.stdout).toMatch(/svc\/here\s+chat\s+7B\s+4096\s+yes/);
  });

  it('reads the package catalog by default', async () => {
    const r = await hearth('models', 'list');
    if (!fs.existsSync(path.join(ROOT, 'models/catalog.json'))) return expect(r.code).toBe(1);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('svc/tiny-chat');
  });

  it('models add refuses a source that is neither a folder nor a hub repo id (exit 1), and needs --id/--from (exit 2)', async () => {
    const r = await hearth('models', 'add', '--id', 'svc/x', '--from', 'x');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/no such folder, and not a hub repo id/);
    expect((await hearth('models', 'add', '--from', 'x')).code).toBe(2);
  });
});

describe('usage errors', () => {
  it.each([
    [['bogus'], /unknown command "bogus"/],
    [['--bogus'], /unknown option/],
    [['keys', 'frobnicate'], /unknown subcommand/],
    [['keys', 'create', '--bogus'], /Unknown option '--bogus'/],
    [['keys', 'create', '--rate-limit', 'lots'], /--rate-limit must be an integer/],
    [['usage', 'extra'], /Unexpected argument|positional/i],
    [['serve', '--port', '70000'], /--port must be an integer from 0 to 65535/],
    [['serve', '--device', 'tpu'], /--device must be one of cpu, cuda, webgpu/],
    [['serve', '--store', 'sqlite'], /--store must be/],
    [[], /Usage: hearth/],
  ])('hearth %j exits 2 with a clear message on stderr', async (args, message) => {
    const r = await hearth(...args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).toBe('');
  });

  it('--help works for every command and exits 0', async () => {
    for (const args of [['--help'], ['serve', '--help'], ['keys', '--help'], ['keys', 'create', '--help'], ['usage', '--help'], ['models', '--help'], ['help', 'keys']]) {
      const r = await hearth(...args);
      expect(r.code, args.join(' ')).toBe(0);
      expect(r.stdout).toMatch(/Usage: hearth/);
    }
  });
});
