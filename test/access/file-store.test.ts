import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createAccess } from '../../src/access/access.js';
import { ACCESS_LOG, openFileStore } from '../../src/access/file-store.js';
import { filesUnder, streamThenKill, tempDir } from './helpers.js';

const usage = { model: 'svc/tiny-chat', prompt_tokens: 3, completion_tokens: 4, cost_usd: 0.001 };

describe('file store', () => {
  it('writes its files with mode 0600 and never the plain key', async () => {
    const dir = tempDir();
    const access = createAccess({ store: openFileStore(dir) });
    const created = await Promise.all([access.createKey({ name: 'a' }), access.createKey({ name: 'b', admin: true })]);
    const first = await access.ensureFirstKey();
    expect(first).toBeNull();
    const p = await access.authenticate(`Bearer ${created[0]!.key}`);
    await access.record(p, usage);
    await access.revokeKey(created[1]!.key);
    await access.close();
    const files = filesUnder(dir);
    expect(files.map((f) => path.basename(f))).toEqual([ACCESS_LOG]);
    for (const f of files) {
      if (process.platform !== 'win32') expect(fs.statSync(f).mode & 0o777).toBe(0o600);
      const text = fs.readFileSync(f, 'utf8');
      for (const { key } of created) {
        expect(text).not.toContain(key);
        expect(text).not.toContain(key.slice('svc_live_'.length));
      }
    }
  });

  it('replays everything on open', async () => {
    const dir = tempDir();
    const a = createAccess({ store: openFileStore(dir) });
    const { key } = await a.createKey({ name: 'alice', sandbox: true, rateLimit: 9 });
    const p = await a.authenticate(`Bearer ${key}`);
    await a.record(p, usage);
    await a.record(p, usage);
    await a.close();
    const b = createAccess({ store: openFileStore(dir) });
    expect(await b.authenticate(`Bearer ${key}`)).toEqual(p);
    expect((await b.usageThisMonth())[0]).toMatchObject({ name: 'alice', requests: 2, prompt_tokens: 6, completion_tokens: 8, spend_usd: 0.002 });
    await b.close();
  });

  it('drops a torn last line on open, and keeps appending cleanly after it', async () => {
    const dir = tempDir();
    const a = createAccess({ store: openFileStore(dir) });
    const { key } = await a.createKey({ name: 'alice' });
    const p = await a.authenticate(`Bearer ${key}`);
    await a.record(p, usage);
    await a.close();
    const file = path.join(dir, ACCESS_LOG);
    const good = fs.readFileSync(file, 'utf8');
    fs.appendFileSync(file, '{"t":"usage","ts":1,"account_id":"acct_x","key_id":"key_x","mod'); // died mid-write

    const store = openFileStore(dir);
    expect(store.info.truncatedBytes).toBeGreaterThan(0);
    expect(fs.readFileSync(file, 'utf8')).toBe(good);
    const b = createAccess({ store });
    await b.record(await b.authenticate(`Bearer ${key}`), usage);
    await b.close();

    const c = createAccess({ store: openFileStore(dir) });
    expect((await c.usageThisMonth())[0]!.requests).toBe(2);
    await c.close();
    for (const line of fs.readFileSync(file, 'utf8').trimEnd().split('\n')) expect(() => JSON.parse(line)).not.toThrow();
  });

  it('skips a line that does not parse and keeps the rest', async () => {
    const dir = tempDir();
    const a = createAccess({ store: openFileStore(dir) });
    const { key } = await a.createKey();
    await a.close();
    fs.appendFileSync(path.join(dir, ACCESS_LOG), 'garbage}\n');
    const store = openFileStore(dir);
    const b = createAccess({ store });
    await b.record(await b.authenticate(`Bearer ${key}`), usage);
    expect(store.info.skippedLines).toBe(1);
    expect((await b.usageThisMonth())[0]!.requests).toBe(1);
    await b.close();
  });

  it('a fragment left by a dead writer cannot swallow a live writer’s line', async () => {
    const dir = tempDir();
    const server = createAccess({ store: openFileStore(dir) });
    const { key } = await server.createKey();
    const p = await server.authenticate(`Bearer ${key}`);
    fs.appendFileSync(path.join(dir, ACCESS_LOG), '{"t":"usage","ts":'); // another process died mid-line
    await server.record(p, usage);
    await server.record(p, usage);
    expect((await server.usageThisMonth())[0]!.requests).toBe(2);
    await server.close();
    const again = createAccess({ store: openFileStore(dir) });
    expect((await again.usageThisMonth())[0]!.requests).toBe(2);
    await again.close();
  });

  it('two writers on one file each see the other’s appends', async () => {
    const dir = tempDir();
    const s1 = createAccess({ store: openFileStore(dir) });
    const s2 = createAccess({ store: openFileStore(dir) });
    const k1 = await s1.createKey({ name: 'one' });
    const k2 = await s2.createKey({ name: 'two' });
    const p1 = await s2.authenticate(`Bearer ${k1.key}`);
    const p2 = await s1.authenticate(`Bearer ${k2.key}`);
    for (let i = 0; i < 5; i++) {
      await s1.record(p2, usage);
      await s2.record(p1, usage);
    }
    for (const s of [s1, s2]) {
      const rows = await s.usageThisMonth();
      expect(rows.map((r) => [r.name, r.requests])).toEqual([
        ['one', 5],
        ['two', 5],
      ]);
    }
    await s1.close();
    await s2.close();
  });

  it('refuses a log written by a newer format version', async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, ACCESS_LOG), '{"t":"header","format":"hearth-access","version":99,"created":0}\n');
    expect(() => openFileStore(dir)).toThrow(/newer Hearth/);
  });

  it('loses nothing recorded when the process is killed with SIGKILL', async () => {
    const dir = tempDir();
    const setup = createAccess({ store: openFileStore(dir) });
    const { key } = await setup.createKey({ name: 'victim' });
    await setup.close();
    const script = `
      import { createAccess } from './src/access/access.js';
      import { openFileStore } from './src/access/file-store.js';
      const a = createAccess({ store: openFileStore(${JSON.stringify(dir)}) });
      const p = await a.authenticate(${JSON.stringify('Bearer ' + key)});
      for (let i = 1; ; i++) {
        await a.record(p, { model: 'svc/tiny-chat', prompt_tokens: 1, completion_tokens: 1, cost_usd: 0.001 });
        process.stdout.write(i + '\\n');
      }`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: path.resolve(import.meta.dirname, '../..'),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let acked = 0;
    await new Promise<void>((resolve, reject) => {
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (chunk: string) => {
        const nums = chunk.trim().split('\n').map(Number);
        acked = Math.max(acked, ...nums);
        if (acked >= 50) {
          child.kill('SIGKILL');
          resolve();
        }
      });
      child.on('exit', () => resolve());
      child.on('error', reject);
    });
    if (child.exitCode === null && child.signalCode === null) await new Promise((r) => child.once('exit', r));
    expect(acked).toBeGreaterThanOrEqual(50);
    const after = createAccess({ store: openFileStore(dir) });
    expect((await after.usageThisMonth())[0]!.requests).toBeGreaterThanOrEqual(acked);
    await after.close();
  });

  it('a hold left by a process killed with SIGKILL is released on the next open; its settled charges stay', async () => {
    const dir = tempDir();
    const setup = createAccess({ store: openFileStore(dir) });
    const { key } = await setup.createKey({ name: 'holder', sandbox: true });
    await setup.close();
    // The child charges one request, then holds the whole cap for another and is killed mid-request.
    const script = `
      import { createAccess } from './src/access/access.js';
      import { openFileStore } from './src/access/file-store.js';
      const a = createAccess({ store: openFileStore(${JSON.stringify(dir)}), sandboxCapUsd: 1 });
      const p = await a.authenticate(${JSON.stringify('Bearer ' + key)});
      const done = await a.reserve(p, { model: 'svc/tiny-chat', maxCostUsd: 0.5 });
      await done.settle({ model: 'svc/tiny-chat', prompt_tokens: 1, completion_tokens: 1, cost_usd: 0.25 });
      await a.reserve(p, { model: 'svc/tiny-chat', maxCostUsd: 0.75 });
      process.stdout.write('held\\n');
      setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: path.resolve(import.meta.dirname, '../..'),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => d.toString().includes('held') && resolve());
      child.on('exit', (code) => reject(new Error(`child exited with ${code}`)));
    });
    // While the holder lives, its hold counts for a store opened beside it.
    const beside = createAccess({ store: openFileStore(dir), sandboxCapUsd: 1 });
    const p = await beside.authenticate(`Bearer ${key}`);
    await expect(beside.reserve(p, { model: 'svc/tiny-chat', maxCostUsd: 0.5 })).rejects.toMatchObject({ status: 429, code: 'insufficient_quota' });
    await beside.close();
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));

    const after = createAccess({ store: openFileStore(dir), sandboxCapUsd: 1 });
    expect((await after.usageThisMonth())[0]).toMatchObject({ requests: 1, spend_usd: 0.25 });
    const hold = await after.reserve(p, { model: 'svc/tiny-chat', maxCostUsd: 0.75 });
    await hold.settle(null);
    await after.close();
  });

  it('a stream’s hold left by a process killed with SIGKILL is charged its last delivery on the next open', async () => {
    const dir = tempDir();
    const setup = createAccess({ store: openFileStore(dir) });
    const { key } = await setup.createKey({ name: 'streamer', sandbox: true });
    await setup.close();
    await streamThenKill(`openFileStore(${JSON.stringify(dir)})`, key);

    const after = createAccess({ store: openFileStore(dir), sandboxCapUsd: 1 });
    const [u] = await after.usageThisMonth();
    expect(u).toMatchObject({ requests: 1, prompt_tokens: 5, completion_tokens: 40 });
    expect(u!.spend_usd).toBeCloseTo(0.04, 12);
    // The hold is over: all the rest of the cap is free.
    const p = await after.authenticate(`Bearer ${key}`);
    await (await after.reserve(p, { model: 'svc/tiny-chat', maxCostUsd: 0.96 })).settle(null);
    await after.close();
    // Opened again, nothing is charged twice.
    const again = createAccess({ store: openFileStore(dir) });
    expect((await again.usageThisMonth())[0]).toMatchObject({ requests: 1, completion_tokens: 40 });
    await again.close();
  });

  it('keeps the item index beside the responses: a marker per holder, gone with its response; a stray marker is passed over', async () => {
    const dir = tempDir();
    const store = openFileStore(dir);
    const item = (id: string) => ({ id, type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hello' }] });
    const response = (id: string, created: number, items: string[]) => ({ id, account_id: 'acct_a', created, response: { id, object: 'response', output: [] }, input_items: items.map(item) });
    await store.putResponse(response('resp_1', 1_000_000, ['msg_a']));
    await store.putResponse(response('resp_2', 2_000_000, ['msg_a', 'msg_b']));
    const index = path.join(dir, 'responses', 'acct_a', '.items');
    expect(fs.readdirSync(path.join(index, 'msg_a')).sort()).toEqual(['resp_1', 'resp_2']);
    expect((await store.getResponseItem('msg_a', 'acct_a'))?.response_id).toBe('resp_2');
    // A marker a crash left (its response never renamed into place) changes nothing.
    fs.writeFileSync(path.join(index, 'msg_a', 'resp_9'), '');
    fs.mkdirSync(path.join(index, 'msg_z'));
    fs.writeFileSync(path.join(index, 'msg_z', 'resp_9'), '');
    expect((await store.getResponseItem('msg_a', 'acct_a'))?.response_id).toBe('resp_2');
    expect(await store.getResponseItem('msg_z', 'acct_a')).toBeUndefined();
    expect(await store.deleteResponse('resp_2', 'acct_a')).toBe(true);
    expect(fs.existsSync(path.join(index, 'msg_b'))).toBe(false);
    expect(fs.readdirSync(path.join(index, 'msg_a')).sort()).toEqual(['resp_1', 'resp_9']);
    expect((await store.getResponseItem('msg_a', 'acct_a'))?.response_id).toBe('resp_1');
    // A lookup removes a stray marker once it is an hour old (its writer died).
    const hourAgo = (Date.now() - 3_700_000) / 1000;
    fs.utimesSync(path.join(index, 'msg_a', 'resp_9'), hourAgo, hourAgo);
    expect((await store.getResponseItem('msg_a', 'acct_a'))?.response_id).toBe('resp_1');
    expect(fs.readdirSync(path.join(index, 'msg_a'))).toEqual(['resp_1']);
    // The index is never read as responses: retention counts responses only.
    expect(await store.pruneResponses({ accountId: 'acct_a', keep: 1 })).toBe(0);
    expect(await store.pruneResponses({ before: 1_500_000 })).toBe(1);
    expect(await store.getResponseItem('msg_a', 'acct_a')).toBeUndefined();
    await store.close();
  });
});
