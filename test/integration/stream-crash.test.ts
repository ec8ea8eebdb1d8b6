// A stream cut by kill -9 of its server is charged for what it delivered. A real server
// streams a long /generate (tiny-chat with ignore_eos: it never stops early); once the
// client has read K tokens and then 64 more, the server is killed with SIGKILL. The
// client reads what was still on its way. After a restart on the same data (the same
// data dir; the same redis), `hearth usage --json` charges the stream at least the K
// tokens (its hold recorded them: deliveries are written at least every 32 tokens) and
// no more than the client received in all, with the prompt's real tokens, at the
// catalog price. On the file store the account is a sandbox (its hold is on the cap, and
// the charge settles it); on redis it is not (its hold exists only for the charge).

import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REDIS_MISSING, redisServerBinary, startRedis, type TestRedis } from '../helpers/redis.js';
import { createKey, hearth, startServer, waitReady, type TestServer } from '../helpers/server.js';

const haveRedis = redisServerBinary() !== null;
if (!haveRedis) console.warn(REDIS_MISSING);

const PRICE = { input: 0.1, output: 0.4 }; // svc/tiny-chat, per 1M tokens (models/catalog.json)
// The bound checked (what was recorded is within 64 tokens of what the client had at the kill)
// assumes tokens come a step at a time. With speculative decoding one step can send up to 17 at
// once, faster than a delivery write lands while the machine is busy (in a CI run: 32 recorded
// at 128 received on redis): this test is about the crash, so its servers decode without it.
const SERVE = ['--rate-limit', '1000', '--speculative', 'off'];
const PROMPT = 'Once upon a time, in a house by the sea,';
const MAX_NEW = 1900;
const K = 64;

interface Usage {
  name: string;
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  spend_usd: number;
}

const post = (server: TestServer, key: string, body: unknown) =>
  fetch(`${server.url}/generate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

/** The prompt's tokens as the server counts them (a one-token request on another account). */
async function promptTokens(server: TestServer, key: string): Promise<number> {
  const res = await post(server, key, { text: PROMPT, sampling_params: { max_new_tokens: 1, temperature: 0 } });
  return ((await res.json()) as { meta_info: { prompt_tokens: number } }).meta_info.prompt_tokens;
}

/**
 * Streams a long generation, kills the server with SIGKILL once K and then 64 more tokens
 * have arrived, and reads on until the connection ends. Returns K's moment, the count at
 * the kill, and all that arrived.
 */
async function streamAndKill(server: TestServer, key: string): Promise<{ atKill: number; total: number }> {
  const res = await post(server, key, { text: PROMPT, stream: true, sampling_params: { max_new_tokens: MAX_NEW, ignore_eos: true, temperature: 0 } });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let seen = 0;
  let atKill = 0;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let cut: number;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const event = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        if (!event.startsWith('data: {')) continue;
        const meta = (JSON.parse(event.slice(6)) as { meta_info?: { completion_tokens?: number } }).meta_info;
        seen = Math.max(seen, meta?.completion_tokens ?? 0);
      }
      if (!atKill && seen >= K + 64) {
        atKill = seen;
        server.proc.kill('SIGKILL');
      }
    }
  } catch {
    // the connection went down with the server
  }
  await server.stop(); // already dead: resolves with its exit
  return { atKill, total: seen };
}

async function usageOf(name: string, store: string[]): Promise<Usage | undefined> {
  const rows = JSON.parse(await hearth(['usage', '--json', ...store])) as Usage[];
  return rows.find((u) => u.name === name);
}

function checkCharge(u: Usage | undefined, prompt: number, cut: { atKill: number; total: number }, where: string): void {
  console.log(
    `${where}: killed with ${cut.atKill} tokens received (${cut.total} in all, of ${MAX_NEW} asked); after the restart the stream is charged ${u?.completion_tokens} completion tokens`,
  );
  expect(cut.atKill).toBeGreaterThanOrEqual(K + 64);
  expect(cut.total).toBeLessThan(MAX_NEW); // cut mid-stream, not finished
  expect(u).toBeDefined();
  expect(u!.requests).toBe(1);
  expect(u!.prompt_tokens).toBe(prompt);
  expect(u!.completion_tokens).toBeGreaterThanOrEqual(K);
  expect(u!.completion_tokens).toBeLessThanOrEqual(cut.total);
  expect(u!.spend_usd).toBeCloseTo((prompt * PRICE.input + u!.completion_tokens * PRICE.output) / 1e6, 12);
}

describe('a stream cut by kill -9', () => {
  const servers: TestServer[] = [];
  let redis: TestRedis | undefined;
  afterAll(async () => {
    for (const s of servers) if (s.proc.exitCode === null && s.proc.signalCode === null) await s.stop('SIGKILL');
    await redis?.stop();
  });

  it('is charged what it delivered after a restart on the file store (a sandbox account)', async () => {
    const first = await startServer(SERVE);
    servers.push(first);
    await waitReady(first.url);
    const key = await createKey(first.dataDir, ['--name', 'streamer', '--sandbox']);
    const probe = await createKey(first.dataDir, ['--name', 'probe']);
    const prompt = await promptTokens(first, probe);
    const cut = await streamAndKill(first, key);

    const second = await startServer(SERVE, first.dataDir);
    servers.push(second);
    await waitReady(second.url);
    checkCharge(await usageOf('streamer', ['--data-dir', first.dataDir]), prompt, cut, 'file store');
    // Its hold on the cap is over: settled by the charge, in the log.
    const lines = fs
      .readFileSync(path.join(first.dataDir, 'access.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { t: string; id?: string; hold?: string });
    const held = lines.filter((l) => l.t === 'reserve').map((l) => l.id);
    expect(held).toHaveLength(1);
    expect(lines.filter((l) => l.t === 'usage' && l.hold === held[0])).toHaveLength(1);
    expect(await second.stop()).toBe(0);
  }, 180_000);

  it.skipIf(!haveRedis)('is charged what it delivered after a restart on the same redis (an account without a cap)', async () => {
    redis = await startRedis();
    const store = ['--store', redis.url];
    const first = await startServer([...store, ...SERVE]);
    servers.push(first);
    await waitReady(first.url);
    const key = (await hearth(['keys', 'create', ...store, '--name', 'streamer'])).trim().split('\n').pop()!;
    const probe = (await hearth(['keys', 'create', ...store, '--name', 'probe'])).trim().split('\n').pop()!;
    const prompt = await promptTokens(first, probe);
    const cut = await streamAndKill(first, key);

    const second = await startServer([...store, ...SERVE], first.dataDir);
    servers.push(second);
    await waitReady(second.url);
    checkCharge(await usageOf('streamer', store), prompt, cut, 'redis');
    expect(await second.stop()).toBe(0);
  }, 180_000);
});
