// npx tsx bench/model-residency.ts (issue 47): does a model's memory come back when it unloads?
// Starts `hearth serve --load on-demand` on the bench model (svc/bench-chat: `npm run models --
// --preset bench` writes it), and over three cycles loads it (admin route), runs one chat
// request of 256 tokens, unloads it, and reads the server's RSS before the load, once loaded and
// after the unload (waiting up to 10 s for it to come back within 64 MiB of before). Also the RSS
// at rest of an eager server of the same model, for comparison. Writes
// bench/results-residency-memory.json (RESIDENCY_OUT=<file> elsewhere) and prints a table.
// Linux only (it reads /proc); build first (npm run build), as it runs bin/hearth.js.
// MALLOC_MMAP_THRESHOLD_=65536 in the environment runs the servers with glibc's mmap threshold
// fixed (bench/results-residency-memory-mmap-threshold.json was written so).
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFixtures } from '../models/index.js';
import { loadUnloadCycles, settledRss } from './residency-memory.js';

const MODEL = process.env.RESIDENCY_MODEL ?? 'svc/bench-chat';
const OUT = process.env.RESIDENCY_OUT ?? 'bench/results-residency-memory.json';
const cli = ['bin/hearth.js'];

await writeFixtures({ ifMissing: true, preset: 'bench' });

async function server(flags: string[]) {
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-residency-'));
  const key = execFileSync(process.execPath, [...cli, 'keys', 'create', '--admin', '--data-dir', dataDir, '--rate-limit', '100000'], { encoding: 'utf8' }).trim().split('\n').pop()!;
  const proc = spawn(process.execPath, [...cli, 'serve', '--port', '0', '--data-dir', dataDir, '--log-level', 'warn', '--models', MODEL, ...flags], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  const url = await new Promise<string>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no server:\n${out}`)), 60_000);
    proc.stdout!.on('data', () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) (clearTimeout(t), resolve(m[1]!));
    });
  });
  return { url, key, proc, stop: () => proc.kill('SIGTERM') };
}

async function ready(url: string): Promise<void> {
  for (;;) {
    const h = (await (await fetch(`${url}/health`)).json()) as { models: Record<string, string> };
    if (Object.values(h.models).every((s) => s === 'ready')) return;
    await new Promise((r) => setTimeout(r, 200));
  }
}

const eager = await server([]);
await ready(eager.url);
const eagerRest = await settledRss(eager.proc.pid!, 2000);
eager.stop();

const lazy = await server(['--load', 'on-demand']);
const lazyRest = await settledRss(lazy.proc.pid!, 2000);
const chat = async () => {
  const res = await fetch(`${lazy.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${lazy.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'Tell me a story.' }], max_tokens: 256, temperature: 0 }),
  });
  if (!res.ok) throw new Error(`chat: ${res.status} ${await res.text()}`);
  await res.json();
};
const cycles = await loadUnloadCycles({ url: lazy.url, adminKey: lazy.key, model: MODEL, pid: lazy.proc.pid!, cycles: 3, use: chat });
lazy.stop();

const MiB = 2 ** 20;
const result = {
  model: MODEL,
  at: new Date().toISOString(),
  node: process.version,
  // glibc's malloc keeps freed weights in its heap unless its mmap threshold is fixed low (docs/on-demand.md).
  malloc_mmap_threshold: process.env.MALLOC_MMAP_THRESHOLD_ ?? null,
  rest_mib: { eager: Math.round((eagerRest / MiB) * 10) / 10, on_demand: Math.round((lazyRest / MiB) * 10) / 10 },
  cycles,
  targets: {
    back_within_64_mib_of_before: cycles.every((c) => c.unloaded_mib <= c.before_mib + 64),
    cycles_within_32_mib_of_first: cycles.every((c) => Math.abs(c.unloaded_mib - cycles[0]!.unloaded_mib) <= 32),
  },
};
console.log(`RSS at rest: eager ${result.rest_mib.eager} MiB, on demand ${result.rest_mib.on_demand} MiB`);
console.table(cycles);
console.log(result.targets);
writeFileSync(OUT, JSON.stringify(result, null, 2) + '\n');
process.exit(0);
