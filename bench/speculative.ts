// npm run bench:speculative [-- --quick] [--out FILE]
// Speculative decoding by prompt lookup (issue 35), the engine alone in this process (no worker,
// no HTTP, prefix cache off, greedy), with speculation on and off, one engine each, in one run:
// - the designed copying fixture (qwen3-copy-export: Qwen3's 151,936-token vocabulary; its reply
//   recites a 52-token passage the prompt holds), where prompt lookup drafts nearly every token;
// - fixtures whose replies never repeat their prompt (random weights): the bench model (512-token
//   vocabulary, 10 layers of 512) and the Qwen-shaped small twin (fused q4f16, 151,936 tokens),
//   where speculation must cost nothing;
// each at 1 stream and at 8: aggregate tok/s, per-stream decode tok/s (after the first token), graph
// runs per generated token (decode steps ÷ tokens after the first), drafted and accepted tokens.
// `npm run bench` runs this as one of its parts.
import { realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { COPYING_PASSAGE } from '../models/exports/copying.js';
import { writeQwenShaped } from '../models/exports/qwen-shaped.js';
import { FIXTURES_DIR, writeFixtures } from '../models/index.js';
import { nodeBackend } from '../src/backends/node.js';
import { createEngine } from '../src/engine/engine.js';
import type { CatalogEntry, ModelStats, SamplingParams } from '../src/engine/protocol.js';
import type { SpeculativeMode } from '../src/engine/spec/draft-policy.js';
import { modelsSettled } from '../src/runtime.js';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

interface Fixture {
  name: string;
  folder: string;
  dtype: string;
  /** Stream i's prompt in round r. */
  prompt: (r: number, i: number) => string;
  /** Replies run to max_tokens (random weights), or end where the model ends them (the copying fixture). */
  ignoreEos: boolean;
}

export interface ModeFigures {
  aggregate_tokens_per_s: number;
  per_stream_decode_tokens_per_s: number;
  tokens_per_request: number;
  graph_runs_per_token: number;
  drafted_tokens: number;
  accepted_tokens: number;
}

export interface SpeculativeFigures {
  fixture: string;
  streams: Record<number, { off: ModeFigures; ngram: ModeFigures; speedup: number }>;
}

const WORDS = ['the', 'river', 'stone', 'light', 'quiet', 'market', 'winter', 'garden', 'table', 'window', 'signal', 'paper'];
const filler = (seed: number, n: number) => Array.from({ length: n }, (_, k) => WORDS[(seed * 7 + k * 5) % WORDS.length]).join(' ');

async function measure(f: Fixture, mode: SpeculativeMode, streams: number[], repeats: number, maxTokens: number, log: (s: string) => void) {
  const engine = createEngine(nodeBackend('cpu'), { kvCacheMb: 0, speculative: mode });
  const id = `bench/${f.name}`;
  const entry: CatalogEntry = { id, task: 'chat', class: 'bench', context_length: 4096, source: f.folder, dtype: { cpu: f.dtype }, reasoning: 'none', price: { input_per_1m: 0, output_per_1m: 0 } };
  await engine.load([entry]);
  await modelsSettled(engine);
  const [state] = await engine.models();
  if (state?.status !== 'ready') throw new Error(`${f.name} did not load: ${state?.detail}`);
  const stats = async (): Promise<ModelStats> => (await engine.stats!()).models.find((m) => m.id === id)!;
  const sampling: SamplingParams = {
    max_tokens: maxTokens, temperature: 0, top_p: 1, top_k: -1, min_p: 0, presence_penalty: 0,
    frequency_penalty: 0, stop: [], stop_token_ids: [], ignore_eos: f.ignoreEos, logprobs: -1,
  };
  let n = 0;
  const roundOf = async (c: number, r: number) => {
    const t = performance.now();
    const runs = await Promise.all(
      Array.from({ length: c }, async (_, i) => {
        let first = 0;
        const res = await engine.generate({ id: `sp${n++}`, model: id, prompt: { messages: [{ role: 'user', content: f.prompt(r, i) }] }, sampling }, () => void (first ||= performance.now()));
        return { first, end: performance.now(), tokens: res.completion_tokens };
      }),
    );
    const wall = (performance.now() - t) / 1000;
    return { aggregate: runs.reduce((k, x) => k + x.tokens, 0) / wall, decode: median(runs.map((x) => (x.tokens - 1) / ((x.end - x.first) / 1000))), tokens: runs.reduce((k, x) => k + x.tokens, 0) };
  };
  try {
    await roundOf(1, 999); // warm-up
    const out: Record<number, ModeFigures> = {};
    for (const c of streams) {
      const before = await stats();
      const rounds = [];
      for (let r = 0; r < repeats; r++) rounds.push(await roundOf(c, r));
      const after = await stats();
      const tokens = rounds.reduce((k, x) => k + x.tokens, 0);
      // The first token of each request comes from its prompt's run: the decode steps made the rest.
      const later = tokens - c * repeats;
      out[c] = {
        aggregate_tokens_per_s: round(median(rounds.map((x) => x.aggregate))),
        per_stream_decode_tokens_per_s: round(median(rounds.map((x) => x.decode))),
        tokens_per_request: round(tokens / (c * repeats), 1),
        graph_runs_per_token: round((after.decode_steps! - before.decode_steps!) / later, 3),
        drafted_tokens: after.spec_drafted_tokens! - before.spec_drafted_tokens!,
        accepted_tokens: after.spec_accepted_tokens! - before.spec_accepted_tokens!,
      };
      log(`${f.name}, speculation ${mode}, ${c} stream(s): ${JSON.stringify(out[c])}`);
    }
    return out;
  } finally {
    await engine.dispose?.();
  }
}

export interface SpeculativeOptions {
  streams: number[];
  repeats: number;
  maxTokens: number;
  log: (line: string) => void;
}

export async function measureSpeculative(o: SpeculativeOptions): Promise<{ settings: object; fixtures: SpeculativeFigures[]; targets: Record<string, boolean> }> {
  await writeFixtures({ preset: 'exports', ifMissing: true });
  await writeFixtures({ preset: 'bench', ifMissing: true });
  const fixtures: Fixture[] = [
    { name: 'qwen3-copy-export', folder: join(FIXTURES_DIR, 'qwen3-copy-export'), dtype: 'fp32', prompt: (r, i) => `Round ${r}, request ${i}. Repeat after me: ${COPYING_PASSAGE}`, ignoreEos: false },
    { name: 'bench-chat', folder: join(FIXTURES_DIR, 'bench-chat'), dtype: 'fp32', prompt: (r, i) => `Round ${r}, request ${i}: ${filler(r * 100 + i, 24)}`, ignoreEos: true },
    { name: 'qwen2_5-small-twin-q4f16', folder: writeQwenShaped(FIXTURES_DIR, 'small'), dtype: 'q4f16', prompt: (r, i) => `Round ${r}, request ${i}: ${filler(r * 100 + i, 24)}`, ignoreEos: true },
  ];
  const results: SpeculativeFigures[] = [];
  for (const f of fixtures) {
    const off = await measure(f, 'off', o.streams, o.repeats, o.maxTokens, o.log);
    const ngram = await measure(f, 'ngram', o.streams, o.repeats, o.maxTokens, o.log);
    results.push({
      fixture: f.name,
      streams: Object.fromEntries(o.streams.map((c) => [c, { off: off[c]!, ngram: ngram[c]!, speedup: round(ngram[c]!.per_stream_decode_tokens_per_s / off[c]!.per_stream_decode_tokens_per_s, 3) }])),
    });
  }
  const copy = results[0]!;
  // "Never slower", read within this machine's noise: at least 0.95 of the rate without speculation.
  const never = results.flatMap((r) => o.streams.map((c) => r.streams[c]!.ngram.aggregate_tokens_per_s >= 0.95 * r.streams[c]!.off.aggregate_tokens_per_s));
  return {
    settings: { streams: o.streams, repeats: o.repeats, max_tokens: o.maxTokens },
    fixtures: results,
    targets: {
      'copying fixture, batch 1: decode with prompt lookup >= 2x without': copy.streams[1]!.speedup >= 2,
      'speculation never slower (>= 0.95x aggregate, every fixture and stream count)': never.every(Boolean),
    },
  };
}

/** A table of the figures, for the log. */
export function speculativeTable(r: Awaited<ReturnType<typeof measureSpeculative>>): string {
  const lines = ['| fixture | streams | decode tok/s a stream, off → ngram | speedup | graph runs a token, off → ngram | accepted / drafted |', '|---|---:|---:|---:|---:|---:|'];
  for (const f of r.fixtures) {
    for (const [c, s] of Object.entries(f.streams)) {
      lines.push(`| ${f.fixture} | ${c} | ${s.off.per_stream_decode_tokens_per_s} → ${s.ngram.per_stream_decode_tokens_per_s} | ${s.speedup}× | ${s.off.graph_runs_per_token} → ${s.ngram.graph_runs_per_token} | ${s.ngram.accepted_tokens} / ${s.ngram.drafted_tokens} |`);
    }
  }
  return lines.join('\n');
}

if (process.argv[1] && realpathSync(process.argv[1]) === import.meta.filename) {
  const { values } = parseArgs({ options: { quick: { type: 'boolean' }, out: { type: 'string' } } });
  const log = (s: string) => console.log(`[bench:speculative] ${s}`);
  const r = await measureSpeculative({ streams: [1, 8], repeats: values.quick ? 1 : 3, maxTokens: 64, log });
  const out = values.out ?? join(import.meta.dirname, 'results-speculative.json');
  writeFileSync(out, `${JSON.stringify({ date: new Date().toISOString(), ...r }, null, 2)}\n`);
  console.log(`\n${speculativeTable(r)}\n`);
  console.log(JSON.stringify(r.targets, null, 2));
  log(`wrote ${out}`);
}
