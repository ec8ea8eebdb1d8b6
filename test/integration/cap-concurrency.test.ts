// 30 simultaneous sandbox requests near the spending cap never end above it: on one
// server with the file store, and across two servers sharing one redis. Each request is
// a /generate on 8 prompt tokens with 16 new tokens and ignore_eos, so its real cost is
// its most possible cost (8 × 0.1 + 16 × 0.4 per 1M = 7.2e-6 USD) and the cap (10.5 of
// them) lets exactly 10 run. Checked only at admission against spend so far, all 30 would
// start (nothing is spent yet) and the month would end at 30 × 7.2e-6, far above the cap.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDIS_MISSING, redisServerBinary, startRedis, type TestRedis } from '../helpers/redis.js';
import { createKey, hearth, startServer, waitReady, type TestServer } from '../helpers/server.js';

const haveRedis = redisServerBinary() !== null;
if (!haveRedis) console.warn(REDIS_MISSING);

const COST = (8 * 0.1 + 16 * 0.4) / 1e6;
const CAP = 10.5 * COST;
const body = JSON.stringify({
  input_ids: [72, 101, 97, 114, 116, 104, 32, 33],
  sampling_params: { max_new_tokens: 16, ignore_eos: true, temperature: 0 },
});

interface Outcome {
  ok: number;
  refused: number;
  other: number[];
}

/** Fires 30 requests at once, spread over `urls`. */
async function burst(urls: string[], key: string): Promise<Outcome> {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const responses = await Promise.all(
    Array.from({ length: 30 }, (_, i) => fetch(`${urls[i % urls.length]}/generate`, { method: 'POST', headers, body })),
  );
  const out: Outcome = { ok: 0, refused: 0, other: [] };
  for (const r of responses) {
    const json = (await r.json()) as { error?: { code: string }; meta_info?: { completion_tokens: number } };
    if (r.status === 200) {
      expect(json.meta_info!.completion_tokens).toBe(16);
      out.ok++;
    } else if (r.status === 429 && json.error?.code === 'insufficient_quota') out.refused++;
    else out.other.push(r.status);
  }
  return out;
}

async function spendOf(name: string, store: string[]): Promise<number> {
  const rows = JSON.parse(await hearth(['usage', '--json', ...store])) as Array<{ name: string; spend_usd: number; requests: number }>;
  return rows.find((u) => u.name === name)?.spend_usd ?? 0;
}

function report(where: string, o: Outcome, spend: number): void {
  console.log(
    `cap under 30 simultaneous requests (${where}): ${o.ok} served, ${o.refused} refused; final spend ${spend.toExponential(4)} USD vs cap ${CAP.toExponential(4)} USD (${((spend / CAP) * 100).toFixed(1)}%)`,
  );
}

describe('the spending cap under 30 simultaneous requests, file store', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer(['--sandbox-cap-usd', String(CAP), '--rate-limit', '1000']);
    await waitReady(server.url);
  });
  afterAll(async () => {
    expect(await server.stop()).toBe(0);
  });

  it('never ends above the cap, and every hold is settled in the log', async () => {
    const key = await createKey(server.dataDir, ['--name', 'burst-file', '--sandbox']);
    const o = await burst([server.url], key);
    const spend = await spendOf('burst-file', ['--data-dir', server.dataDir]);
    report('one server, file store', o, spend);
    expect(o.other).toEqual([]);
    expect(spend).toBeLessThanOrEqual(CAP);
    expect(o.ok).toBe(10);
    expect(spend).toBeCloseTo(10 * COST, 12);
    const lines = fs
      .readFileSync(path.join(server.dataDir, 'access.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { t: string; id?: string; hold?: string });
    const held = lines.filter((l) => l.t === 'reserve').map((l) => l.id);
    const settled = lines.filter((l) => (l.t === 'usage' && l.hold) || l.t === 'release').map((l) => l.hold ?? l.id);
    expect(held).toHaveLength(10);
    expect(settled.sort()).toEqual(held.sort());
  }, 240_000);
});

describe.skipIf(!haveRedis)('the spending cap under 30 simultaneous requests, two servers on one redis', () => {
  let redis: TestRedis;
  let servers: TestServer[] = [];
  const store = () => ['--store', redis.url];

  beforeAll(async () => {
    redis = await startRedis();
    servers = await Promise.all([0, 1].map(() => startServer([...store(), '--sandbox-cap-usd', String(CAP), '--rate-limit', '1000'])));
    await Promise.all(servers.map((s) => waitReady(s.url)));
  });
  afterAll(async () => {
    const codes = await Promise.all(servers.map((s) => s.stop()));
    await redis?.stop();
    expect(codes).toEqual([0, 0]);
  });

  it('never ends above the cap across both servers', async () => {
    const key = (await hearth(['keys', 'create', ...store(), '--name', 'burst-redis', '--sandbox'])).trim().split('\n').pop()!;
    const o = await burst(
      servers.map((s) => s.url),
      key,
    );
    const spend = await spendOf('burst-redis', store());
    report('two servers, one redis', o, spend);
    expect(o.other).toEqual([]);
    expect(spend).toBeLessThanOrEqual(CAP);
    expect(o.ok).toBe(10);
    expect(spend).toBeCloseTo(10 * COST, 12);
  }, 240_000);
});
