// npm run bench:device -- --device webgpu|cuda|cpu [--out FILE]
// The engine alone (no worker, no HTTP) on one onnxruntime-node device, with the
// bench preset model: batch-1 decode, 8 and 16 concurrent sequences, and decode
// after a long prompt. For measuring a GPU machine; `npm run bench` is the full
// CPU benchmark with HTTP and the transformers.js baseline.
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { FIXTURES_DIR, writeFixtures } from '../models/index.js';
import { nodeBackend } from '../src/backends/node.js';
import { createEngine } from '../src/engine/engine.js';
import type { Device, SamplingParams } from '../src/engine/protocol.js';
import { modelsSettled } from '../src/runtime.js';

const { values: args } = parseArgs({
  options: {
    device: { type: 'string', default: 'cpu' },
    tokens: { type: 'string', default: '128' },
    repeats: { type: 'string', default: '3' },
    out: { type: 'string' },
  },
});
const device = args.device as Device;
const MAX_TOKENS = Number(args.tokens);
const REPEATS = Number(args.repeats);
const MODEL = 'svc/bench-chat';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;
const words = ['the', 'river', 'stone', 'light', 'quiet', 'market', 'winter', 'garden', 'table', 'window'];
const filler = (seed: number, n: number) => Array.from({ length: n }, (_, i) => words[(seed * 7 + i * 3) % words.length]).join(' ');

const sampling: SamplingParams = {
  max_tokens: MAX_TOKENS, temperature: 0, top_p: 1, top_k: -1, min_p: 0, presence_penalty: 0,
  frequency_penalty: 0, stop: [], stop_token_ids: [], ignore_eos: false, logprobs: -1,
};

await writeFixtures({ preset: 'bench', ifMissing: true });
const engine = createEngine(nodeBackend(device), { kvCacheMb: 0 });
const t0 = performance.now();
await engine.load([{
  id: MODEL, task: 'chat', class: '40M', context_length: 4096,
  source: join(FIXTURES_DIR, 'bench-chat'), price: { input_per_1m: 0, output_per_1m: 0 },
}]);
await modelsSettled(engine);
const [state] = await engine.models();
if (state.status !== 'ready') throw new Error(`bench-chat did not load on ${device}: ${state.detail}`);
const loadMs = performance.now() - t0;

let n = 0;
/** Runs `concurrency` requests at once; returns aggregate tokens/s and the median per-stream decode rate. */
async function run(concurrency: number, promptWords: number) {
  const starts: number[] = [];
  const firsts: number[] = [];
  const t = performance.now();
  const results = await Promise.all(
    Array.from({ length: concurrency }, (_, i) => {
      const id = n++;
      starts[i] = performance.now();
      return engine.generate(
        { id: `b${id}`, model: MODEL, prompt: { messages: [{ role: 'user', content: `${id}: ${filler(id, promptWords)}` }] }, sampling },
        () => (firsts[i] ||= performance.now()),
      ).then((r) => ({ ...r, end: performance.now() }));
    }),
  );
  const wall = (performance.now() - t) / 1000;
  const tokens = results.reduce((s, r) => s + r.completion_tokens, 0);
  const decode = results.map((r, i) => (r.completion_tokens - 1) / ((r.end - firsts[i]) / 1000));
  return { aggregate: tokens / wall, decode: median(decode), promptTokens: results[0].prompt_tokens };
}

await run(1, 8); // warm-up
const figures: Record<string, unknown> = {};
for (const [name, concurrency, promptWords] of [
  ['batch1_short_prompt', 1, 14],
  ['batch1_long_prompt', 1, 640],
  ['concurrent8', 8, 12],
  ['concurrent16', 16, 12],
] as const) {
  const rounds = [];
  for (let r = 0; r < REPEATS; r++) rounds.push(await run(concurrency, promptWords));
  figures[name] = {
    prompt_tokens: rounds[0].promptTokens,
    aggregate_tokens_per_s: round(median(rounds.map((x) => x.aggregate))),
    per_stream_decode_tokens_per_s: round(median(rounds.map((x) => x.decode))),
    spread_aggregate: [round(Math.min(...rounds.map((x) => x.aggregate))), round(Math.max(...rounds.map((x) => x.aggregate)))],
  };
  console.log(`[bench:device] ${device} ${name}: ${JSON.stringify(figures[name])}`);
}
await engine.dispose();

const results = {
  date: new Date().toISOString(),
  device,
  machine: { cpu: cpus()[0]?.model, cores: cpus().length, node: process.version },
  model: MODEL,
  settings: { max_tokens: MAX_TOKENS, repeats: REPEATS, prefix_cache: false },
  load_ms: round(loadMs),
  ...figures,
};
const out = args.out ?? join(import.meta.dirname, `device-${device}.json`);
writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
console.log(JSON.stringify(results, null, 2));
