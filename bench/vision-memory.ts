// npm run bench:vision-memory: whether `hearth serve` gives back what images take (issue 32).
// It serves the SmolVLM fixture (models/fixtures/smolvlm-export) from the built CLI in a process
// group of its own, sends 100 chat requests each with another 256×256 image (a data: URL PNG of
// seeded noise, split 4×4 plus the global tile: 272 image tokens), one at a time, and reads the
// resident memory (VmRSS summed over the group, from /proc) 5 s after the first and 5 s after the
// hundredth. The prefix cache keeps each prompt's KV within its budget (--kv-cache-mb); with
// VISION_ARGS='--kv-cache-mb 0' it keeps none, and what is left is what the images left.
// Figures to bench/results-vision-memory.json (VISION_OUT=<file> to write elsewhere).
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import sharp from 'sharp';
import { FIXTURES_DIR, writeFixtures } from '../models/index.js';
import { groupRssBytes } from './process-group.js';

const MiB = 2 ** 20;
const OUT = process.env.VISION_OUT ?? 'bench/results-vision-memory.json';
const REQUESTS = Number(process.env.VISION_REQUESTS ?? 100);
const MODEL = 'svc/smolvlm-export';

await writeFixtures({ preset: 'exports', ifMissing: true });
const dataDir = mkdtempSync(join(tmpdir(), 'hearth-vision-memory-'));
const cli = ['bin/hearth.js'];
const key = execFileSync(process.execPath, [...cli, 'keys', 'create', '--data-dir', dataDir, '--name', 'bench', '--rate-limit', '100000000'], { encoding: 'utf8' }).trim().split('\n').pop()!;
const extra = (process.env.VISION_ARGS ?? '').split(/\s+/).filter(Boolean);
const args = ['serve', '--port', '0', '--data-dir', dataDir, '--log-level', 'warn', '--models', resolve(FIXTURES_DIR, 'smolvlm-export'), ...extra];
const proc = spawn(process.execPath, [...cli, ...args], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
const pgid = proc.pid!;
let output = '';
proc.stdout!.on('data', (d) => (output += d));
proc.stderr!.on('data', (d) => (output += d));
const stop = () => {
  try {
    process.kill(-pgid, 'SIGTERM');
  } catch {
    // gone
  }
};
process.on('exit', stop);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const url = await new Promise<string>((ok, fail) => {
  const timer = setTimeout(() => fail(new Error(`the server did not start:\n${output}`)), 120_000);
  proc.stdout!.on('data', () => {
    const m = /listening on (http:\/\/\S+)/.exec(output);
    if (m) {
      clearTimeout(timer);
      ok(m[1]!);
    }
  });
});
for (let end = Date.now() + 120_000; ; await sleep(200)) {
  const res = await fetch(`${url}/health`).catch(() => undefined);
  const states = res?.ok ? Object.values(((await res.json()) as { models: Record<string, string> }).models) : [];
  if (states.length && states.every((s) => s === 'ready')) break;
  if (Date.now() > end) throw new Error(`the model did not load:\n${output}`);
}

const groupRss = (): number => groupRssBytes(pgid);
const mib = (b: number) => Math.round((b / MiB) * 10) / 10;

async function image(seed: number): Promise<string> {
  const rgb = Buffer.alloc(256 * 256 * 3);
  let s = seed;
  for (let i = 0; i < rgb.length; i++) rgb[i] = (s = (Math.imul(s, 1103515245) + 12345) >>> 0) >>> 24;
  return `data:image/png;base64,${(await sharp(rgb, { raw: { width: 256, height: 256, channels: 3 } }).png().toBuffer()).toString('base64')}`;
}

async function ask(seed: number): Promise<{ status: number; ms: number; prompt_tokens?: number }> {
  const t0 = performance.now();
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, max_tokens: 8, temperature: 0, messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: await image(seed) } }, { type: 'text', text: 'What is in this image?' }] }] }),
  });
  const body = (await res.json()) as { usage?: { prompt_tokens: number } };
  return { status: res.status, ms: Math.round(performance.now() - t0), prompt_tokens: body.usage?.prompt_tokens };
}

/** The engine thread's JS heap and what it holds outside it (ArrayBuffers, WASM), from /metrics. */
async function engineMemory(): Promise<Record<string, number | undefined>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const read = (name: string) => {
    const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
    return m ? mib(Number(m[1])) : undefined;
  };
  return {
    engine_heap_mib: read('hearth_engine_heap_bytes'),
    engine_external_mib: read('hearth_engine_external_bytes'),
    router_heap_mib: read('hearth_nodejs_heap_size_used_bytes'),
    router_external_mib: read('hearth_nodejs_external_memory_bytes'),
  };
}

const idle = groupRss();
const first = await ask(1);
await sleep(5000);
const afterFirst = groupRss();
const statuses = [first.status];
const ms = [first.ms];
// The memory every 25 requests, to tell a plateau from a leak.
const along: { requests: number; mib: number }[] = [];
for (let i = 2; i <= REQUESTS; i++) {
  const r = await ask(i);
  statuses.push(r.status);
  ms.push(r.ms);
  if (i % 25 === 0) along.push({ requests: i, mib: mib(groupRss()), ...(await engineMemory()) });
}
await sleep(5000);
const afterAll = groupRss();
stop();

ms.sort((a, b) => a - b);
const results = {
  at: new Date().toISOString(),
  commit: execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim(),
  server_args: args.slice(7),
  unit: 'MiB, VmRSS summed over the server process group',
  requests: REQUESTS,
  prompt_tokens_each: first.prompt_tokens,
  all_200: statuses.every((s) => s === 200),
  median_ms: ms[Math.floor(ms.length / 2)],
  idle_mib: mib(idle),
  after_first_mib: mib(afterFirst),
  after_last_mib: mib(afterAll),
  growth_first_to_last_mib: mib(afterAll - afterFirst),
  every_25: along,
};
console.log(results);
writeFileSync(OUT, JSON.stringify(results, null, 2) + '\n');
process.exit(0);
