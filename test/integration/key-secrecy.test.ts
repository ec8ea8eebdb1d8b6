// No log line and no data file ever contains a key. A real server (file store, then
// redis) takes requests with good keys, a revoked key, near-misses of a good key and
// keys smuggled into other places (query, path, x-request-id, body); then its stdout,
// stderr, every file in its data dir (and, for redis, every value in redis) and the
// CLI's listings are searched for each key, its random part, and a 16-character piece.

import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { REDIS_MISSING, redisServerBinary, startRedis, type TestRedis } from '../helpers/redis.js';
import { hearth, startServer, waitReady } from '../helpers/server.js';
import { CLI } from '../helpers/cli.js';

const haveRedis = redisServerBinary() !== null;

/** What must never appear: the key, its random part, and a 16-character piece of it. */
function needles(key: string): string[] {
  const random = key.slice('svc_live_'.length);
  return [key, random, random.slice(8, 24)];
}

function filesUnder(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name));
}

/** A request with raw headers (duplicates kept), answered or not. */
function raw(url: string, method: string, p: string, headers: [string, string][], body?: string): Promise<number> {
  return new Promise((resolve) => {
    const u = new URL(url);
    const req = http.request({ host: u.hostname, port: u.port, method, path: p, headers: headers.flat() as unknown as http.OutgoingHttpHeaders });
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(0));
    req.end(body);
  });
}

async function exercise(url: string, good: string, revoked: string): Promise<Record<string, number>> {
  const statuses: Record<string, number> = {};
  const json = { 'content-type': 'application/json' };
  const chat = (content: string, extra: Record<string, unknown> = {}) =>
    JSON.stringify({ model: 'svc/tiny-chat', messages: [{ role: 'user', content }], max_tokens: 8, ...extra });
  const req = async (label: string, p: string, init: RequestInit) => {
    const res = await fetch(`${url}${p}`, init);
    await res.arrayBuffer();
    statuses[label] = res.status;
  };
  const bearer = (k: string) => ({ authorization: `Bearer ${k}` });
  const last = good[good.length - 1]!;
  const nearMiss = good.slice(0, -1) + (last === 'A' ? 'B' : 'A');

  await req('models', '/v1/models', { headers: bearer(good) });
  await req('chat', '/v1/chat/completions', { method: 'POST', headers: { ...bearer(good), ...json }, body: chat('hi', { user: 'u1' }) });
  await req('stream', '/v1/chat/completions', { method: 'POST', headers: { ...bearer(good), ...json }, body: chat('hi', { stream: true }) });
  await req('embeddings', '/v1/embeddings', { method: 'POST', headers: { ...bearer(good), ...json }, body: JSON.stringify({ model: 'svc/tiny-embed', input: 'x' }) });
  await req('generate', '/generate', { method: 'POST', headers: { ...bearer(good), ...json }, body: JSON.stringify({ text: 'x', sampling_params: { max_new_tokens: 4 } }) });
  await req('revoked', '/v1/models', { headers: bearer(revoked) });
  await req('near-miss', '/v1/models', { headers: bearer(nearMiss) });
  await req('longer', '/v1/models', { headers: bearer(good + 'x') });
  await req('truncated', '/v1/models', { headers: bearer(good.slice(0, 30)) });
  await req('upper-prefix', '/v1/models', { headers: bearer(good.replace('svc_live_', 'SVC_LIVE_')) });
  await req('sk-prefix', '/v1/models', { headers: bearer(good.replace('svc_live_', 'sk-')) });
  await req('no-scheme', '/v1/models', { headers: { authorization: good } });
  await req('basic', '/v1/models', { headers: { authorization: `Basic ${Buffer.from(`x:${good}`).toString('base64')}` } });
  await req('two-tokens', '/v1/models', { headers: { authorization: `Bearer ${good} ${nearMiss}` } });
  await req('x-api-key', '/v1/models', { headers: { 'x-api-key': good } });
  await req('query', `/v1/models?api_key=${good}`, {});
  await req('path', `/v1/models/${good}`, { headers: bearer(good) });
  await req('unknown-path', `/v1/${good}`, { headers: bearer(good) });
  await req('request-id', '/v1/models', { headers: { ...bearer(good), 'x-request-id': good } });
  await req('request-id-charged', '/v1/chat/completions', { method: 'POST', headers: { ...bearer(good), ...json, 'x-request-id': good }, body: chat('hi') });
  await req('key-in-body', '/v1/chat/completions', { method: 'POST', headers: { ...bearer(good), ...json }, body: chat(good, { user: good }) });
  await req('key-in-bad-json', '/v1/chat/completions', { method: 'POST', headers: { ...bearer(good), ...json }, body: `{"model": "${good}", ` });
  await req('key-as-model', '/v1/chat/completions', { method: 'POST', headers: { ...bearer(good), ...json }, body: JSON.stringify({ model: good, messages: [] }) });
  await req('near-miss-body', '/v1/chat/completions', { method: 'POST', headers: { ...bearer(nearMiss), ...json }, body: chat('x') });
  statuses['duplicate-auth'] = await raw(url, 'GET', '/v1/models', [
    ['authorization', `Bearer ${good}`],
    ['authorization', `Bearer ${nearMiss}`],
  ]);
  return statuses;
}

function expectNoKeys(where: string, text: string, keys: string[]): void {
  for (const k of keys) for (const n of needles(k)) expect(text.includes(n), `${where} contains (a piece of) a key`).toBe(false);
}

describe('keys never reach logs or data files', () => {
  let redis: TestRedis | undefined;
  afterAll(async () => {
    await redis?.stop();
  });

  it('file store: server output, every data file and the CLI listings hold no key', async () => {
    const dir = fs.mkdtempSync(path.join((await import('node:os')).tmpdir(), 'hearth-secrecy-'));
    const make = async (name: string) => (await hearth(['keys', 'create', '--data-dir', dir, '--name', name])).trim().split('\n').pop()!;
    const good = await make('good');
    const revoked = await make('revoked');
    await hearth(['keys', 'revoke', revoked, '--data-dir', dir]);
    const server = await startServer([], dir);
    await waitReady(server.url);
    const statuses = await exercise(server.url, good, revoked);
    expect(statuses.models).toBe(200);
    expect(statuses.chat).toBe(200);
    for (const bad of ['revoked', 'near-miss', 'longer', 'truncated', 'upper-prefix', 'sk-prefix', 'no-scheme', 'basic', 'two-tokens', 'x-api-key', 'query', 'near-miss-body']) {
      expect(statuses[bad], bad).toBe(401);
    }
    // A revocation by the CLI (the key read from stdin) while the server runs.
    const child = execFile(process.execPath, [...CLI, 'keys', 'revoke', '-', '--data-dir', dir]);
    child.stdin!.end(good + '\n');
    let revokeOut = '';
    child.stdout!.on('data', (d) => (revokeOut += d));
    await new Promise((r) => child.once('exit', r));
    expect((await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${good}` } })).status).toBe(401);
    expect(await server.stop()).toBe(0);

    const keys = [good, revoked];
    expectNoKeys('the server output', server.output(), keys);
    expect(server.output().length).toBeGreaterThan(0);
    const files = filesUnder(dir);
    expect(files.some((f) => f.endsWith('access.jsonl'))).toBe(true);
    for (const f of files) expectNoKeys(f, fs.readFileSync(f).toString('latin1'), keys);
    const listings = [
      revokeOut,
      await hearth(['keys', 'list', '--data-dir', dir]),
      await hearth(['keys', 'list', '--json', '--data-dir', dir]),
      await hearth(['usage', '--data-dir', dir]),
      await hearth(['usage', '--json', '--data-dir', dir]),
    ].join('\n');
    expectNoKeys('the CLI listings', listings, keys);
    console.log(`key secrecy (file): ${Object.keys(statuses).length + 1} kinds of request; searched the server output (${server.output().length} bytes) and ${files.length} data files`);
    fs.rmSync(dir, { recursive: true, force: true });
  }, 180_000);

  it.skipIf(!haveRedis)('redis store: server output and every value in redis hold no key', async () => {
    if (!haveRedis) return console.warn(REDIS_MISSING);
    redis = await startRedis();
    const store = ['--store', redis.url];
    const make = async (name: string) => (await hearth(['keys', 'create', ...store, '--name', name])).trim().split('\n').pop()!;
    const good = await make('good');
    const revoked = await make('revoked');
    await hearth(['keys', 'revoke', revoked, ...store]);
    const server = await startServer(store);
    await waitReady(server.url);
    const statuses = await exercise(server.url, good, revoked);
    expect(statuses.chat).toBe(200);
    expect(statuses['near-miss']).toBe(401);
    expect(await server.stop()).toBe(0);
    expectNoKeys('the server output', server.output(), [good, revoked]);

    const client = new Redis(redis.url);
    let dump = '';
    for (const k of await client.keys('*')) {
      dump += k + '\n';
      const type = await client.type(k);
      if (type === 'string') dump += (await client.get(k)) + '\n';
      else if (type === 'hash') dump += JSON.stringify(await client.hgetall(k)) + '\n';
      else if (type === 'list') dump += (await client.lrange(k, 0, -1)).join('\n') + '\n';
      else if (type === 'zset') dump += (await client.zrange(k, '0', '-1')).join('\n') + '\n';
      else if (type === 'set') dump += (await client.smembers(k)).join('\n') + '\n';
    }
    await client.quit();
    expect(dump).toContain('keyhash');
    expectNoKeys('redis', dump, [good, revoked]);
  }, 180_000);
});
