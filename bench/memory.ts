// npm run bench:memory: how much memory `hearth serve` takes for large embeddings requests,
// and whether it gives it back (issue 31). It starts the server on a free port with the
// default fixtures, in a process group of its own, samples the resident memory (VmRSS) of
// every process in that group every 100 ms from /proc, and measures:
//   - idle: the mean over 3 s after a warm-up;
//   - one request of 2,048 short inputs (OpenAI's most for a request): its peak, and the
//     memory 10 s after it answered;
//   - four such requests at once: their peak, and 10 s after;
//   - one request of 10,000 inputs: its status and time (a 400 at once is the target) and
//     the growth it caused;
//   - long inputs (of about 450 tokens, as many as fit the body limit): the largest runs an
//     embedding model makes, their peak and 10 s after (no target: what onnxruntime's arena
//     keeps shows here);
//   - four chat completions at once with prompts of about 1,500 tokens: their peak and 10 s after.
// It measures memory, not time: one run at a time, on a machine otherwise quiet enough for
// RSS to mean something. The figures go to bench/results-memory.json (MEMORY_OUT=<file> to
// write elsewhere) and are printed, each against its target.
//
// HEARTH_ROOT=<checkout> runs the (built) server of another checkout (a `git worktree` of an
// older commit, to measure the code before a change); MEMORY_ARGS adds `hearth serve` arguments;
// MEMORY_ENV='A=1 B=2' adds environment variables to the server.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { writeFixtures } from '../models/index.js';
import { groupRssBytes } from './process-group.js';

const MiB = 2 ** 20;
const SAMPLE_MS = 100;
const ROOT = resolve(process.env.HEARTH_ROOT ?? '.');
const OUT = process.env.MEMORY_OUT ?? 'bench/results-memory.json';
const MODEL = 'svc/tiny-embed';

// ---------- the server, in a process group of its own ----------

await writeFixtures({ ifMissing: true });
const dataDir = mkdtempSync(join(tmpdir(), 'hearth-memory-'));
// The built CLI, as users run it (`npm run bench:memory` builds first): tsx would add its
// esbuild service to the process group.
const cli = ['bin/hearth.js'];
const key = execFileSync(process.execPath, [...cli, 'keys', 'create', '--data-dir', dataDir, '--name', 'bench', '--rate-limit', '100000000'], { cwd: ROOT, encoding: 'utf8' })
  .trim()
  .split('\n')
  .pop()!;
const extraEnv = Object.fromEntries((process.env.MEMORY_ENV ?? '').split(/\s+/).filter(Boolean).map((kv) => kv.split('=') as [string, string]));
const serverArgs = ['serve', '--port', '0', '--data-dir', dataDir, '--log-level', 'warn', ...(process.env.MEMORY_ARGS ?? '').split(/\s+/).filter(Boolean)];
const proc = spawn(process.execPath, [...cli, ...serverArgs], { cwd: ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...extraEnv } });
const pgid = proc.pid!;
let output = '';
proc.stdout!.on('data', (d) => (output += d));
proc.stderr!.on('data', (d) => (output += d));
const stopServer = () => {
  try {
    process.kill(-pgid, 'SIGTERM');
  } catch {
    // already gone
  }
};
process.on('exit', stopServer);
process.on('SIGINT', () => process.exit(130));

const url = await new Promise<string>((resolveUrl, reject) => {
  const timer = setTimeout(() => reject(new Error(`the server did not start:\n${output}`)), 120_000);
  proc.stdout!.on('data', () => {
    const m = /listening on (http:\/\/\S+)/.exec(output);
    if (m) {
      clearTimeout(timer);
      resolveUrl(m[1]!);
    }
  });
  proc.once('exit', (code) => reject(new Error(`the server exited with ${code}:\n${output}`)));
});
for (let end = Date.now() + 120_000; ; ) {
  const res = await fetch(`${url}/health`).catch(() => undefined);
  const states = res?.ok ? Object.values(((await res.json()) as { models: Record<string, string> }).models) : [];
  if (states.length && states.every((s) => s === 'ready' || s === 'failed')) break;
  if (Date.now() > end) throw new Error(`the models did not load:\n${output}`);
  await sleep(200);
}

// ---------- resident memory of the group ----------


const samples: { t: number; rss: number }[] = [];
const sampler = setInterval(() => samples.push({ t: Date.now(), rss: groupRssBytes(pgid) }), SAMPLE_MS);
const peakSince = (t0: number) => Math.max(...samples.filter((s) => s.t >= t0).map((s) => s.rss));
const latest = () => samples[samples.length - 1]!.rss;
const mib = (b: number) => Math.round((b / MiB) * 10) / 10;

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

// ---------- requests ----------

const words = ['sea', 'stone', 'river', 'light', 'garden', 'winter', 'market', 'window'];
const shortInputs = (count: number, salt: number) => Array.from({ length: count }, (_, i) => `Item ${salt}-${i}: the ${words[i % 8]} and the ${words[(i * 3 + salt) % 8]}.`);

async function post(path: string, payload: object): Promise<{ status: number; ms: number; bytes: number; param?: string; body: string }> {
  const t0 = performance.now();
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(payload),
  });
  const body = await res.text();
  const ms = Math.round(performance.now() - t0);
  let param: string | undefined;
  if (res.status !== 200) {
    const error = (JSON.parse(body) as { error?: { param?: string; message?: string } }).error;
    param = error?.param ?? undefined;
    if (res.status !== 400 || !/items; one request/.test(error?.message ?? '')) console.error(`  ${res.status} on ${path}: ${error?.message}`);
  }
  return { status: res.status, ms, bytes: body.length, ...(param !== undefined ? { param } : {}), body };
}

async function embed(input: string[]): Promise<{ status: number; ms: number; bytes: number; param?: string }> {
  const { body: _body, ...r } = await post('/v1/embeddings', { model: MODEL, input, encoding_format: 'float' });
  return r;
}

/** Tokens of `text` as the embedding model counts them. */
const embedTokens = async (text: string) => (JSON.parse((await post('/v1/embeddings', { model: MODEL, input: text, encoding_format: 'base64' })).body) as { usage: { prompt_tokens: number } }).usage.prompt_tokens;
/** `text` repeated to about `tokens` tokens (of the embedding model). */
async function aboutTokens(text: string, tokens: number): Promise<string> {
  const per = await embedTokens(text);
  return Array.from({ length: Math.max(1, Math.floor(tokens / per)) }, () => text).join(' ');
}

/** Runs `load`, then waits `afterMs`; the peak from its start, and the memory at the end of the wait. */
async function phase<T>(load: () => Promise<T>, afterMs: number): Promise<{ result: T; before: number; peak: number; after: number }> {
  await sleep(2 * SAMPLE_MS);
  const before = latest();
  const t0 = Date.now();
  const result = await load();
  await sleep(afterMs);
  return { result, before, peak: peakSince(t0), after: latest() };
}

// ---------- the run ----------

// Warm-up: the graphs' first runs, and the HTTP path.
for (let i = 0; i < 4; i++) await embed(shortInputs(16, 1000 + i));
await sleep(1000);
const t0 = Date.now();
await sleep(3000);
const idleSamples = samples.filter((s) => s.t >= t0).map((s) => s.rss);
const idle = idleSamples.reduce((a, b) => a + b, 0) / idleSamples.length;
console.log(`idle ${mib(idle)} MiB`);

const one = await phase(() => embed(shortInputs(2048, 1)), 10_000);
console.log(`one 2,048-input request: ${one.result.status} in ${one.result.ms} ms; peak ${mib(one.peak)} MiB (idle + ${mib(one.peak - idle)}), 10 s after ${mib(one.after)} MiB (idle + ${mib(one.after - idle)})`);

const four = await phase(() => Promise.all([2, 3, 4, 5].map((s) => embed(shortInputs(2048, s)))), 10_000);
console.log(`four at once: ${four.result.map((r) => r.status).join(',')} in ${Math.max(...four.result.map((r) => r.ms))} ms; peak ${mib(four.peak)} MiB, 10 s after ${mib(four.after)} MiB (idle + ${mib(four.after - idle)})`);

const huge = await phase(() => embed(shortInputs(10_000, 6)), 2_000);
console.log(`one 10,000-input request: ${huge.result.status}${huge.result.param ? ` (param ${huge.result.param})` : ''} in ${huge.result.ms} ms; peak ${mib(huge.peak)} MiB, growth ${mib(huge.peak - huge.before)} MiB`);

const sentence = 'The river ran past the stone garden in winter, and the market by the window was quiet.';
const longText = await aboutTokens(sentence, 450);
const longTokens = await embedTokens(longText);
// Within the body limit (1 MiB) and the token limit (300,000).
const longCount = Math.min(Math.floor((900 * 1024) / (longText.length + 8)), Math.floor(290_000 / (longTokens + 4)));
const long = await phase(() => embed(Array.from({ length: longCount }, (_, i) => `${i} ${longText}`)), 10_000);
console.log(`${longCount} inputs of ${longTokens} tokens: ${long.result.status} in ${long.result.ms} ms; peak ${mib(long.peak)} MiB (idle + ${mib(long.peak - idle)}), 10 s after ${mib(long.after)} MiB (idle + ${mib(long.after - idle)})`);

const chatOnce = async (content: string) => JSON.parse((await post('/v1/chat/completions', { model: 'svc/tiny-chat', messages: [{ role: 'user', content }], max_tokens: 1 })).body) as { usage: { prompt_tokens: number } };
const sentenceTokens = (await chatOnce(`${sentence} ${sentence}`)).usage.prompt_tokens - (await chatOnce(sentence)).usage.prompt_tokens;
const chatPrompt = (i: number) => `${i}: ` + Array.from({ length: Math.floor(1500 / sentenceTokens) }, () => sentence).join(' ');
const chat = await phase(
  () => Promise.all([0, 1, 2, 3].map((i) => post('/v1/chat/completions', { model: 'svc/tiny-chat', messages: [{ role: 'user', content: chatPrompt(i) }], max_tokens: 16 }))),
  10_000,
);
const chatTokens = (JSON.parse(chat.result[0]!.body) as { usage?: { prompt_tokens: number } }).usage?.prompt_tokens;
console.log(`four chats at once (${chatTokens} prompt tokens each): ${chat.result.map((r) => r.status).join(',')} in ${Math.max(...chat.result.map((r) => r.ms))} ms; peak ${mib(chat.peak)} MiB (idle + ${mib(chat.peak - idle)}), 10 s after ${mib(chat.after)} MiB (idle + ${mib(chat.after - idle)})`);

clearInterval(sampler);
stopServer();

const targets = {
  one_peak_le_idle_plus_300: one.peak - idle <= 300 * MiB,
  one_after_10s_le_idle_plus_100: one.after - idle <= 100 * MiB,
  four_peak_lt_1536: four.peak < 1536 * MiB,
  // "At once": refused before any embedding runs (well under a second even on a busy machine).
  ten_thousand_400_at_once: huge.result.status === 400 && huge.result.ms < 1000,
  ten_thousand_no_growth: huge.peak - huge.before <= 20 * MiB,
};
const results = {
  at: new Date().toISOString(),
  commit: execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim(),
  server_args: serverArgs.slice(5),
  server_env: extraEnv,
  sample_ms: SAMPLE_MS,
  unit: 'MiB, VmRSS summed over the server process group',
  idle_mib: mib(idle),
  one_2048: { ...one.result, peak_mib: mib(one.peak), peak_over_idle_mib: mib(one.peak - idle), after_10s_mib: mib(one.after), after_10s_over_idle_mib: mib(one.after - idle) },
  four_2048_at_once: { statuses: four.result.map((r) => r.status), ms: Math.max(...four.result.map((r) => r.ms)), peak_mib: mib(four.peak), after_10s_mib: mib(four.after), after_10s_over_idle_mib: mib(four.after - idle) },
  one_10000: { ...huge.result, peak_mib: mib(huge.peak), growth_mib: mib(huge.peak - huge.before) },
  long_inputs: { inputs: longCount, tokens_each: longTokens, ...long.result, peak_mib: mib(long.peak), peak_over_idle_mib: mib(long.peak - idle), after_10s_mib: mib(long.after), after_10s_over_idle_mib: mib(long.after - idle) },
  four_chats_at_once: { prompt_tokens_each: chatTokens, statuses: chat.result.map((r) => r.status), ms: Math.max(...chat.result.map((r) => r.ms)), peak_mib: mib(chat.peak), peak_over_idle_mib: mib(chat.peak - idle), after_10s_mib: mib(chat.after), after_10s_over_idle_mib: mib(chat.after - idle) },
  targets,
};
writeFileSync(OUT, JSON.stringify(results, null, 2) + '\n');
console.log(`targets: ${Object.entries(targets).map(([k, ok]) => `${k} ${ok ? 'met' : 'MISSED'}`).join('; ')}`);
console.log(`wrote ${OUT}`);
process.exit(0);
