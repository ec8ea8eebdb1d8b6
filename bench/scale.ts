// npm run bench:scale: the two figures docs/scale.md rests on, with small bounded
// loops on loopback. (1) What a Hearth front server adds to an upstream request:
// the same chat request sent straight to a stub upstream and through a front
// server (its own process, file store, one upstream entry), sequentially, medians
// and p90 compared. (2) How many admissions per second one Redis gives: the access
// layer's per-request work (authenticate, admit, check the cap, hold the most the
// request can cost, settle it to the real cost) on the redis store, from one
// process at a fixed concurrency. Writes bench/scale-results.json.
import { createServer } from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { createAccess } from '../src/access/access.js';
import { openRedisStore } from '../src/access/redis-store.js';
import { createKey, startServer } from '../test/helpers/server.js';
import { startRedis } from '../test/helpers/redis.js';
import { catalogUpstream, writeCatalog } from '../test/helpers/upstream.js';

const REQUESTS = Number(process.env.SCALE_REQUESTS ?? 300);
/** The front server's store: file (the default deployment) or memory (no disk in the path). */
const FRONT_STORE = process.env.SCALE_STORE ?? 'file';
const ADMIT_SECONDS = Number(process.env.SCALE_ADMIT_SECONDS ?? 5);
const ADMIT_CONCURRENCY = Number(process.env.SCALE_ADMIT_CONCURRENCY ?? 32);
const log = (s: string) => console.log(`[scale] ${s}`);
const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))]!;
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

/** An OpenAI-shaped upstream that answers at once, so that only the front's work is measured. */
async function stubUpstream() {
  const reply = JSON.stringify({
    id: 'chatcmpl-stub',
    object: 'chat.completion',
    created: 0,
    model: 'stub-model',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there, traveller.' }, finish_reason: 'stop', logprobs: null }],
    usage: { prompt_tokens: 12, completion_tokens: 6, total_tokens: 18 },
  });
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.method === 'GET') return res.writeHead(200, { 'content-type': 'application/json' }).end('{"object":"list","data":[]}');
      res.writeHead(200, { 'content-type': 'application/json' }).end(reply);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((r) => (server.closeAllConnections(), server.close(r))) };
}

async function timeRequests(url: string, key: string, model: string): Promise<number[]> {
  const body = JSON.stringify({ model, messages: [{ role: 'user', content: 'Hello!' }], max_tokens: 8 });
  const times: number[] = [];
  for (let i = 0; i < REQUESTS + 20; i++) {
    const t0 = performance.now();
    const res = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body });
    await res.text();
    if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
    if (i >= 20) times.push(performance.now() - t0); // the first 20 warm the connections up
  }
  return times;
}

async function frontOverhead() {
  const stub = await stubUpstream();
  const dir = await mkdtemp(join(tmpdir(), 'hearth-scale-'));
  const catalog = await writeCatalog(dir, [catalogUpstream('svc/remote', 'chat', [`${stub.url}/v1`], 'stub-model', { api_key_env: undefined })]);
  const created = FRONT_STORE === 'memory' ? undefined : await createKey(dir, ['--rate-limit', '1000000']);
  const front = await startServer(['--catalog', catalog, '--rate-limit', '1000000', '--log-level', 'warn', '--store', FRONT_STORE], dir);
  // A memory store starts empty: the server prints the key it creates.
  const key = created ?? /svc_live_[A-Za-z0-9]+/.exec(front.output())![0];
  try {
    while (!((await (await fetch(`${front.url}/health`)).json()) as { models: Record<string, string> }).models['svc/remote']?.startsWith('ready')) {
      await new Promise((r) => setTimeout(r, 100));
    }
    const direct = await timeRequests(stub.url, key, 'stub-model');
    const via = await timeRequests(front.url, key, 'svc/remote');
    const r = {
      requests: REQUESTS,
      store: FRONT_STORE,
      direct_ms: { p50: round(quantile(direct, 0.5)), p90: round(quantile(direct, 0.9)) },
      via_front_ms: { p50: round(quantile(via, 0.5)), p90: round(quantile(via, 0.9)) },
      added_ms: { p50: round(quantile(via, 0.5) - quantile(direct, 0.5)), p90: round(quantile(via, 0.9) - quantile(direct, 0.9)) },
    };
    if (process.env.SCALE_DEBUG) console.log(front.output().split('\n').slice(-30).join('\n'));
    log(`front overhead: direct p50 ${r.direct_ms.p50} ms, via front p50 ${r.via_front_ms.p50} ms, added p50 ${r.added_ms.p50} ms (p90 ${r.added_ms.p90} ms)`);
    return r;
  } finally {
    await front.stop('SIGTERM');
    await stub.close();
  }
}

/** CPU seconds a process has used (Linux /proc; clock ticks of 1/100 s). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function redisAdmissions() {
  const redis = await startRedis();
  const access = createAccess({ store: await openRedisStore(redis.url), rateLimit: 1_000_000_000 });
  try {
    // Sandbox keys: their holds go through the cap's reservation, the costlier path.
    const keys = await Promise.all(Array.from({ length: ADMIT_CONCURRENCY }, (_, i) => access.createKey({ name: `bench-${i}`, sandbox: true })));
    const end = Date.now() + ADMIT_SECONDS * 1000;
    let done = 0;
    const worker = async (key: string) => {
      while (Date.now() < end) {
        const p = await access.authenticate(`Bearer ${key}`);
        await access.admit(p);
        await access.checkQuota(p);
        const hold = await access.reserve(p, { model: 'svc/remote', maxCostUsd: 0.001 });
        await hold.settle({ model: 'svc/remote', prompt_tokens: 12, completion_tokens: 6, cost_usd: 0.0000036 }, { beforeReply: true });
        done++;
      }
    };
    const t0 = performance.now();
    const cpu0 = cpuSeconds(redis.proc.pid!);
    await Promise.all(keys.map((k) => worker(k.key)));
    const perSecond = Math.round(done / ((performance.now() - t0) / 1000));
    // What one Redis core could carry: requests per CPU second Redis itself spent.
    const redisCpu = cpuSeconds(redis.proc.pid!) - cpu0;
    const perRedisCpuSecond = Math.round(done / Math.max(redisCpu, 0.01));
    log(`redis: ${perSecond} admitted, held and settled requests per second (${ADMIT_CONCURRENCY} concurrent, one client process); redis-server used ${round(redisCpu)} CPU s: ${perRedisCpuSecond} requests per Redis CPU second`);
    return { concurrency: ADMIT_CONCURRENCY, seconds: ADMIT_SECONDS, requests: done, per_second: perSecond, redis_cpu_seconds: round(redisCpu), per_redis_cpu_second: perRedisCpuSecond };
  } finally {
    await access.close();
    await redis.stop();
  }
}

const results = {
  date: new Date().toISOString(),
  machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version },
  front_overhead: await frontOverhead(),
  redis_admissions: await redisAdmissions(),
};
writeFileSync(join(import.meta.dirname, 'scale-results.json'), JSON.stringify(results, null, 2) + '\n');
log('wrote bench/scale-results.json');
