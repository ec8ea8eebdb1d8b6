// npm run soak: mixed traffic (chat, chat streams, text completions, embeddings,
// /generate) through a front Hearth whose models are served by another Hearth,
// with the upstream killed (kill -9) and restarted half-way. Checks what a long run
// can break: every answered request charged exactly as the client saw it (no lost
// charge), no request left hanging (each has a deadline), and the front's memory
// flat. SOAK_SECONDS (default 300) and SOAK_CONCURRENCY (default 4) size it.
// Writes bench/soak-results.json.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { writeFixtures } from '../models/index.js';
import { createKey, startServer, waitReady, type TestServer } from '../test/helpers/server.js';
import { catalogUpstream, writeCatalog } from '../test/helpers/upstream.js';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 300);
const CONCURRENCY = Number(process.env.SOAK_CONCURRENCY ?? 4);
const DEADLINE_MS = 60_000;
const run = promisify(execFile);
const log = (s: string) => console.log(`[soak] ${new Date().toISOString().slice(11, 19)} ${s}`);

const tally = { ok: 0, cut: 0, refused: 0, hung: 0, other: 0, expectPrompt: 0, expectCompletion: 0 };
const statuses: Record<string, number> = {};

await writeFixtures({ ifMissing: true });
const upDir = await mkdtemp(join(tmpdir(), 'hearth-soak-up-'));
const upKey = await createKey(upDir, ['--name', 'front']);
let upstream: TestServer = await startServer(['--rate-limit', '1000000', '--log-level', 'warn'], upDir);
await waitReady(upstream.url);
const port = new URL(upstream.url).port;
const frontDir = await mkdtemp(join(tmpdir(), 'hearth-soak-front-'));
const live = `${upstream.url}/v1`;
const catalog = await writeCatalog(frontDir, [
  catalogUpstream('svc/remote-chat', 'chat', [live], 'svc/tiny-chat', { probe_interval_ms: 500 }),
  catalogUpstream('svc/remote-embed', 'embedding', [live], 'svc/tiny-embed', { probe_interval_ms: 500 }),
]);
const key = await createKey(frontDir, ['--name', 'soak', '--rate-limit', '1000000']);
process.env.UPSTREAM_KEY = upKey;
const front = await startServer(['--catalog', catalog, '--rate-limit', '1000000', '--log-level', 'warn'], frontDir);
delete process.env.UPSTREAM_KEY;
while (!((await (await fetch(`${front.url}/health`)).json()) as { models: Record<string, string> }).models['svc/remote-chat']?.startsWith('ready')) {
  await new Promise((r) => setTimeout(r, 200));
}

const words = ['sea', 'stone', 'river', 'light', 'garden', 'winter', 'market', 'window'];
const text = (i: number) => `Tell me about the ${words[i % words.length]} and the ${words[(i * 3) % words.length]}.`;
const promptEstimate = (s: string) => Math.ceil(s.length / 4); // what the front counts when the upstream could not say

async function call(path: string, body: unknown): Promise<Response> {
  return fetch(`${front.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(DEADLINE_MS),
  });
}

type Usage = { prompt_tokens: number; completion_tokens: number };

/** Reads an SSE reply; returns the usage it reported, or what a cut stream delivered. */
async function readStream(res: Response, prompt: string, kind: 'chat' | 'text'): Promise<{ usage: Usage; cut: boolean }> {
  const raw = await res.text();
  let usage: Usage | null = null;
  let delivered = 0;
  let cut = false;
  for (const ev of raw.split('\n\n')) {
    if (!ev.startsWith('data: ') || ev === 'data: [DONE]') continue;
    const j = JSON.parse(ev.slice(6)) as { error?: unknown; usage?: Usage | null; choices?: { text?: string; delta?: { content?: string } }[] };
    if (j.error) cut = true;
    if (j.usage) usage = j.usage;
    for (const c of j.choices ?? []) if (kind === 'chat' ? c.delta?.content : c.text) delivered++;
  }
  if (!raw.includes('data: [DONE]')) cut = true;
  return { usage: usage && !cut ? usage : { prompt_tokens: promptEstimate(prompt), completion_tokens: delivered }, cut };
}

async function one(i: number): Promise<void> {
  const prompt = text(i);
  const kind = i % 5;
  let res: Response;
  try {
    if (kind === 0) res = await call('/v1/chat/completions', { model: 'svc/remote-chat', messages: [{ role: 'user', content: prompt }], max_tokens: 32 });
    else if (kind === 1)
      res = await call('/v1/chat/completions', {
        model: 'svc/remote-chat',
        messages: [{ role: 'user', content: prompt }],
        max_tokens: 400,
        ignore_eos: true,
        stream: true,
        stream_options: { include_usage: true },
      });
    else if (kind === 2) res = await call('/v1/completions', { model: 'svc/remote-chat', prompt, max_tokens: 48, stream: true, stream_options: { include_usage: true } });
    else if (kind === 3) res = await call('/v1/embeddings', { model: 'svc/remote-embed', input: [prompt, prompt + ' Again.'] });
    else res = await call('/generate', { model: 'svc/remote-chat', text: prompt, sampling_params: { max_new_tokens: 24 } });
    statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    if (res.status !== 200) {
      await res.text();
      if (res.status === 502 || res.status === 503) tally.refused++;
      else tally.other++;
      await new Promise((r) => setTimeout(r, 100)); // a client backing off while the upstream is down
      return;
    }
    let usage: Usage;
    if (kind === 1 || kind === 2) {
      const r = await readStream(res, prompt, kind === 1 ? 'chat' : 'text');
      usage = r.usage;
      if (r.cut) tally.cut++;
      else tally.ok++;
    } else {
      const j = (await res.json()) as { usage?: Usage; meta_info?: Usage };
      usage = j.usage ?? j.meta_info!;
      tally.ok++;
    }
    tally.expectPrompt += usage.prompt_tokens;
    tally.expectCompletion += usage.completion_tokens ?? 0;
  } catch (e) {
    if ((e as Error).name === 'TimeoutError') tally.hung++;
    else tally.other++;
  }
}

async function rss(): Promise<number> {
  const m = await (await fetch(`${front.url}/metrics`)).text();
  return Number(/^hearth_process_resident_memory_bytes (\S+)/m.exec(m)?.[1] ?? NaN);
}

const started = Date.now();
const end = started + SECONDS * 1000;
let next = 0;
const memory: { at_s: number; rss_mb: number }[] = [];
const sampler = setInterval(() => void rss().then((b) => memory.push({ at_s: Math.round((Date.now() - started) / 1000), rss_mb: Math.round(b / 1e5) / 10 })), Math.max(2000, (SECONDS * 1000) / 30));
const restart = (async () => {
  await new Promise((r) => setTimeout(r, (SECONDS * 1000) / 2));
  log('killing the upstream (SIGKILL)');
  upstream.proc.kill('SIGKILL');
  await new Promise((r) => setTimeout(r, 2000));
  upstream = await startServer(['--rate-limit', '1000000', '--log-level', 'warn', '--port', port], upDir);
  await waitReady(upstream.url);
  log('upstream back');
})();
await Promise.all(
  Array.from({ length: CONCURRENCY }, async () => {
    while (Date.now() < end) await one(next++);
  }),
);
await restart;
clearInterval(sampler);
memory.push({ at_s: Math.round((Date.now() - started) / 1000), rss_mb: Math.round((await rss()) / 1e5) / 10 });
await new Promise((r) => setTimeout(r, 1500)); // the last charges of streams land after their [DONE]

const { stdout } = await run(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'usage', '--data-dir', frontDir, '--json']);
const ledger = (JSON.parse(stdout) as { name: string; requests: number; prompt_tokens: number; completion_tokens: number }[]).find((a) => a.name === 'soak')!;
await front.stop('SIGTERM');
await upstream.stop('SIGTERM');

const warm = memory.filter((m) => m.at_s >= SECONDS * 0.2);
const results = {
  date: new Date().toISOString(),
  seconds: SECONDS,
  concurrency: CONCURRENCY,
  requests: next,
  statuses,
  tally,
  ledger,
  charges_match:
    ledger.requests === tally.ok + tally.cut && ledger.prompt_tokens === tally.expectPrompt && ledger.completion_tokens === tally.expectCompletion,
  memory_mb: { first_warm: warm[0]?.rss_mb, last: memory.at(-1)?.rss_mb, max: Math.max(...memory.map((m) => m.rss_mb)), samples: memory },
};
writeFileSync(join(import.meta.dirname, 'soak-results.json'), JSON.stringify(results, null, 2) + '\n');
log(`requests ${next}: ${JSON.stringify(statuses)}; served ${tally.ok}, cut by the restart ${tally.cut}, refused while down ${tally.refused}, hung ${tally.hung}, other ${tally.other}`);
log(`ledger: ${ledger.requests} requests, ${ledger.prompt_tokens} + ${ledger.completion_tokens} tokens; clients saw ${tally.ok + tally.cut} requests, ${tally.expectPrompt} + ${tally.expectCompletion}: ${results.charges_match ? 'match' : 'MISMATCH'}`);
log(`front RSS: ${results.memory_mb.first_warm} MB after warm-up, ${results.memory_mb.last} MB at the end (max ${results.memory_mb.max})`);
process.exit(results.charges_match && tally.hung === 0 && tally.other === 0 ? 0 : 1);
