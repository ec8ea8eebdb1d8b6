// npm run bench:real-vocab [-- --quick] [--size full|mid|small] [--out FILE]
// A model with a real vocabulary on the CPU (issue 30 §4, DESIGN.md "Real-size models at GPU
// speed"): the Qwen-shaped fused q4f16 (models/exports/qwen-shaped.ts: Qwen2.5's 151,936-token
// vocabulary and tokenizer, its 0.5B shapes or a twin with fewer layers), written at run time.
// The bench model's 512-token vocabulary hid what a row of logits costs the host; this measures it:
// - Hearth (the engine alone, in this process as bench:device runs it: no worker, no HTTP, prefix
//   cache off, greedy) at 1, 8 and 16 streams: aggregate tok/s, per-stream decode, time to first
//   token, and the step loop's time per row by phase (engine.stats()), host time per row (all but
//   the graph's runs) with and without the sampling head's run; the same again on an engine with
//   sampleFrom 'whole-rows' (every row read whole: the path before the sampling head);
// - the graph alone at each batch (graph-rate.ts: the same prompt and new tokens, cache fed back);
// - llama.cpp (node-llama-cpp's CPU binary) on GGUF files of the same weights (Q4_0, which is the
//   q4f16 export's own layout, and optionally F16), at 1 and 2 threads: one request, and 8 and 16
//   sequences decoded in lockstep (one batch a step, as llama-server steps its slots);
// - Hearth ÷ llama.cpp (at its best thread count) and the targets.
// `npm run bench` runs this as one of its parts (BENCH_REAL_VOCAB picks the size, or `off`).
import { existsSync, mkdirSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { getLlama, LlamaLogLevel, type Llama } from 'node-llama-cpp';
import { FIXTURES_DIR } from '../models/index.js';
import { QWEN_SHAPED_SEED, qwenShapedFixture, qwenShapedSpec, writeQwenShaped, type QwenShapedSize } from '../models/exports/qwen-shaped.js';
import { writeQwenShapedGguf } from '../models/gguf/qwen-shaped.js';
import type { LlamaGgufType } from '../models/gguf/llama.js';
import { nodeBackend } from '../src/backends/node.js';
import { createEngine } from '../src/engine/engine.js';
import type { EngineOptions } from '../src/engine/options.js';
import type { SamplingParams } from '../src/engine/protocol.js';
import { modelsSettled } from '../src/runtime.js';
import { countGcPauses, gcPerRow, type GcPerRow } from './gc-pauses.js';
import { graphDecodeRates, type GraphRate } from './graph-rate.js';
import { fileFingerprint, filler, lockstep, request } from './llama-cpp.js';
import { perRow, type EngineLoop } from './step-breakdown.js';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

export interface RealVocabOptions {
  size: QwenShapedSize;
  maxTokens: number;
  repeats: number;
  streams: number[];
  llamaThreads: number[];
  llamaTypes: LlamaGgufType[];
  /** Also measure every row reading its whole row (the path before the sampling head). */
  wholeRows: boolean;
  log: (line: string) => void;
}

export const REAL_VOCAB_DEFAULTS: RealVocabOptions = {
  size: 'full', maxTokens: 64, repeats: 3, streams: [1, 8, 16], llamaThreads: [1, 2], llamaTypes: ['Q4_0'], wholeRows: true, log: () => undefined,
};

/** Each stream count's prompt: the default system prompt of Qwen2.5's template, and a user line of filler. */
const userLine = (round: number, i: number) => `Round ${round}, request ${i}: ${filler(round * 100 + i, 12)}`;
/** The same prompt's text for llama.cpp (Qwen2.5's chat template, as the fixture's tokenizer_config has it). */
const qwenChat = (user: string) =>
  `<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n<|im_start|>user\n${user}<|im_end|>\n<|im_start|>assistant\n`;

export interface StreamFigures {
  aggregate_tokens_per_s: number;
  per_stream_decode_tokens_per_s: number;
  ttft_ms: number;
  rounds: number;
  prompt_tokens: number;
  step_breakdown: ReturnType<typeof perRow>;
  /** V8's GC pauses over the rounds, in whatever phase they fell. */
  gc: GcPerRow;
}

// ------------------------------------------------------------------------------------ Hearth --

/** One engine (sampling from candidates, or from whole rows) at each stream count. */
async function hearthWith(folder: string, o: RealVocabOptions, sampleFrom: NonNullable<EngineOptions['sampleFrom']>, repeats: number) {
  // Speculation off: these figures are read against the graph alone, step for step (speculative.ts measures it).
  const engine = createEngine(nodeBackend('cpu'), { kvCacheMb: 0, sampleFrom, speculative: 'off' });
  const id = 'bench/real-vocab';
  await engine.load([{ id, task: 'chat', class: 'bench', context_length: 4096, source: folder, dtype: { cpu: 'q4f16' }, price: { input_per_1m: 0, output_per_1m: 0 } }]);
  await modelsSettled(engine);
  const [state] = await engine.models();
  if (state?.status !== 'ready') throw new Error(`real-vocab model did not load: ${state?.detail}`);
  const loop = async (): Promise<EngineLoop> => (await engine.stats!()).models.find((m) => m.id === id)!;
  const base: SamplingParams = {
    max_tokens: o.maxTokens, temperature: 0, top_p: 1, top_k: -1, min_p: 0, presence_penalty: 0,
    frequency_penalty: 0, stop: [], stop_token_ids: [], ignore_eos: true, logprobs: -1,
  };
  let n = 0;
  const roundOf = async (streams: number, r: number, sampling: SamplingParams) => {
    const t = performance.now();
    const runs = await Promise.all(
      Array.from({ length: streams }, async (_, i) => {
        const start = performance.now();
        let first = 0;
        const res = await engine.generate({ id: `rv${n++}`, model: id, prompt: { messages: [{ role: 'user', content: userLine(r, i) }] }, sampling }, () => void (first ||= performance.now()));
        return { start, first, end: performance.now(), tokens: res.completion_tokens, prompt: res.prompt_tokens };
      }),
    );
    const wall = (performance.now() - t) / 1000;
    return {
      aggregate: runs.reduce((k, x) => k + x.tokens, 0) / wall,
      decode: median(runs.map((x) => (x.tokens - 1) / ((x.end - x.first) / 1000))),
      ttft: median(runs.map((x) => x.first - x.start)),
      prompt: median(runs.map((x) => x.prompt)),
    };
  };
  try {
    await roundOf(1, 999, { ...base, max_tokens: 4 }); // warm-up
    const streams: Record<number, StreamFigures> = {};
    for (const c of o.streams) {
      const before = await loop();
      const pauses = countGcPauses();
      const rounds = [];
      for (let r = 0; r < repeats; r++) rounds.push(await roundOf(c, r, base));
      const gc = await pauses.stop();
      const breakdown = perRow(before, await loop(), c * repeats);
      streams[c] = {
        aggregate_tokens_per_s: round(median(rounds.map((x) => x.aggregate))),
        per_stream_decode_tokens_per_s: round(median(rounds.map((x) => x.decode))),
        ttft_ms: round(median(rounds.map((x) => x.ttft))),
        rounds: rounds.length,
        prompt_tokens: rounds[0]!.prompt,
        step_breakdown: breakdown,
        gc: gcPerRow(gc, breakdown.rows),
      };
      const s = streams[c];
      o.log(`real vocab, Hearth (${sampleFrom}) ${c} stream(s): ${s.aggregate_tokens_per_s} tok/s aggregate, ${s.per_stream_decode_tokens_per_s} tok/s decode a stream, TTFT ${s.ttft_ms} ms; host ${breakdown.host_ms_per_row} ms a row (${breakdown.host_ms_per_row_without_head} without the head's run; V8 GC ${s.gc.ms_per_row} ms a row), ${JSON.stringify(breakdown.phases_ms_per_row)}`);
    }
    return streams;
  } finally {
    await engine.dispose();
  }
}

async function hearth(folder: string, o: RealVocabOptions) {
  const streams = await hearthWith(folder, o, 'candidates', o.repeats);
  // The path every row took before the sampling head, one round a stream count.
  const wholeRows: Record<number, StreamFigures> = o.wholeRows ? await hearthWith(folder, o, 'whole-rows', 1) : {};
  return { streams, whole_rows: wholeRows };
}

// --------------------------------------------------------------------------------- llama.cpp --

export interface PeerRun {
  batch1_tokens_per_s: number;
  batch1_decode_tokens_per_s: number;
  /** Sequences in lockstep: their tokens ÷ the wall time, prefill included. */
  concurrent_tokens_per_s: Record<number, number>;
}

/** GGUF files of the model's weights (beside its fixture, git-ignored with it), written where missing or stale. */
async function ggufs(size: QwenShapedSize, types: LlamaGgufType[], log: (line: string) => void): Promise<Record<string, string>> {
  const dir = join(FIXTURES_DIR, `${qwenShapedFixture(size)}-gguf`);
  mkdirSync(dir, { recursive: true });
  // The weights are the seed's and the spec's: those, and the writer's version, name them.
  const fp = `${qwenShapedFixture(size)} seed ${QWEN_SHAPED_SEED} writer 1`;
  const paths: Record<string, string> = {};
  for (const type of types) {
    const path = (paths[type] = join(dir, `${type}.gguf`));
    if (existsSync(path) && (await fileFingerprint(path)) === fp) continue;
    log(`writing ${path}`);
    writeQwenShapedGguf(path, size, type, { metadata: [['hearth.weights_sha256', fp]] });
  }
  return paths;
}

async function llamaCpp(size: QwenShapedSize, o: RealVocabOptions) {
  const paths = await ggufs(size, o.llamaTypes, o.log);
  const llama: Llama = await getLlama({ gpu: false, build: 'never', skipDownload: true, progressLogs: false, logLevel: LlamaLogLevel.error, maxThreads: 0 });
  const forms: Record<string, { file_bytes: number; threads: Record<number, PeerRun>; best: PeerRun & { threads: Record<string, number> } }> = {};
  const concurrent = o.streams.filter((c) => c > 1);
  try {
    for (const type of o.llamaTypes) {
      const model = await llama.loadModel({ modelPath: paths[type]! });
      const ids = (r: number, i: number) => Array.from(model.tokenize(qwenChat(userLine(r, i)), true), Number);
      const byThreads: Record<number, PeerRun> = {};
      for (const threads of o.llamaThreads) {
        const promptLength = ids(0, 0).length;
        const ctx1 = await model.createContext({ contextSize: promptLength + o.maxTokens + 64, threads, flashAttention: 'auto' });
        const seq = ctx1.getSequence();
        await request(seq, ids(999, 0), 4); // warm-up
        const runs = [];
        for (let r = 0; r < o.repeats; r++) runs.push(await request(seq, ids(r, 0), o.maxTokens));
        await ctx1.dispose();
        const rates: Record<number, number> = {};
        for (const c of concurrent) {
          const ctx = await model.createContext({ sequences: c, contextSize: promptLength + o.maxTokens + 64, threads, flashAttention: 'auto' });
          const seqs = Array.from({ length: c }, () => ctx.getSequence());
          await lockstep(seqs, seqs.map((_, i) => ids(998, i)), 4); // warm-up
          const rounds: number[] = [];
          for (let r = 0; r < o.repeats; r++) rounds.push(await lockstep(seqs, seqs.map((_, i) => ids(r, i)), o.maxTokens));
          rates[c] = round(median(rounds));
          await ctx.dispose();
        }
        byThreads[threads] = {
          batch1_tokens_per_s: round(o.maxTokens / median(runs.map((x) => x.total))),
          batch1_decode_tokens_per_s: round((o.maxTokens - 1) / median(runs.map((x) => x.decode))),
          concurrent_tokens_per_s: rates,
        };
        const b = byThreads[threads];
        o.log(`real vocab, llama.cpp ${type}, ${threads} thread(s): one request ${b.batch1_tokens_per_s} tok/s (decode ${b.batch1_decode_tokens_per_s}), lockstep ${JSON.stringify(rates)}`);
      }
      await model.dispose();
      forms[type] = { file_bytes: statSync(paths[type]!).size, threads: byThreads, best: bestOf(byThreads) };
    }
  } finally {
    await llama.dispose();
  }
  return { engine: `llama.cpp ${llama.llamaCppRelease.release} via node-llama-cpp (${llama.buildType} CPU binary)`, settings: { threads: o.llamaThreads, flash_attention: 'auto', kv_cache: 'F16' }, forms };
}

/** Each figure at the thread count that gives its best. */
export function bestOf(byThreads: Record<number, PeerRun>): PeerRun & { threads: Record<string, number> } {
  const entries = Object.entries(byThreads).map(([t, r]) => [Number(t), r] as const);
  const pick = (f: (r: PeerRun) => number) => entries.reduce((a, b) => (f(b[1]) > f(a[1]) ? b : a));
  const b1 = pick((r) => r.batch1_tokens_per_s);
  const dec = pick((r) => r.batch1_decode_tokens_per_s);
  const streams = Object.keys(entries[0]![1].concurrent_tokens_per_s).map(Number);
  const conc = Object.fromEntries(streams.map((c) => [c, pick((r) => r.concurrent_tokens_per_s[c]!)]));
  return {
    batch1_tokens_per_s: b1[1].batch1_tokens_per_s,
    batch1_decode_tokens_per_s: dec[1].batch1_decode_tokens_per_s,
    concurrent_tokens_per_s: Object.fromEntries(streams.map((c) => [c, conc[c]![1].concurrent_tokens_per_s[c]!])),
    threads: { batch1: b1[0], batch1_decode: dec[0], ...Object.fromEntries(streams.map((c) => [`concurrent_${c}`, conc[c]![0]])) },
  };
}

// ------------------------------------------------------------------------ ratios and targets --

type Ratio = { hearth: number; llama_cpp: number; llama_cpp_threads: number; ratio: number };

/**
 * Hearth ÷ llama.cpp's Q4_0 at its best thread count (one stream: a whole request, and its
 * decode; N concurrent: aggregate against N in lockstep), and the targets: host time ≤ 0.1 ms a
 * row at each stream count; ≥ 0.8× at one stream and ≥ 1.0× at 8 concurrent (null: no figure).
 */
export function againstLlamaCpp(hearth: Record<number, Pick<StreamFigures, 'aggregate_tokens_per_s' | 'per_stream_decode_tokens_per_s'> & { step_breakdown: { host_ms_per_row: number } }>, q4: (PeerRun & { threads: Record<string, number> }) | undefined) {
  const vsLlama: Record<string, Ratio> = {};
  const fig = (ours: number, theirs: number, threads: number): Ratio => ({ hearth: ours, llama_cpp: theirs, llama_cpp_threads: threads, ratio: round(ours / theirs) });
  const streams = Object.keys(hearth).map(Number);
  if (q4) {
    if (hearth[1]) {
      vsLlama['1 stream'] = fig(hearth[1].aggregate_tokens_per_s, q4.batch1_tokens_per_s, q4.threads.batch1!);
      vsLlama['1 stream, decode'] = fig(hearth[1].per_stream_decode_tokens_per_s, q4.batch1_decode_tokens_per_s, q4.threads.batch1_decode!);
    }
    for (const c of streams.filter((x) => x > 1 && q4.concurrent_tokens_per_s[x] !== undefined)) {
      vsLlama[`${c} concurrent`] = fig(hearth[c]!.aggregate_tokens_per_s, q4.concurrent_tokens_per_s[c]!, q4.threads[`concurrent_${c}`]!);
    }
  }
  const targets: Record<string, boolean | null> = {};
  for (const c of streams) targets[`real vocab: host time <= 0.1 ms a row (${c} stream${c > 1 ? 's' : ''})`] = hearth[c]!.step_breakdown.host_ms_per_row <= 0.1;
  targets['real vocab: q4 >= 0.8x llama.cpp Q4_0 at one stream'] = vsLlama['1 stream'] ? vsLlama['1 stream'].ratio >= 0.8 : null;
  targets['real vocab: q4 >= 1.0x llama.cpp Q4_0 at 8 concurrent'] = vsLlama['8 concurrent'] ? vsLlama['8 concurrent'].ratio >= 1 : null;
  return { vsLlama, targets };
}

// -------------------------------------------------------------------------------- the whole --

export type RealVocabResults = Awaited<ReturnType<typeof measureRealVocab>>;

export async function measureRealVocab(options: Partial<RealVocabOptions> = {}) {
  const o: RealVocabOptions = { ...REAL_VOCAB_DEFAULTS, ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) };
  if (!['full', 'mid', 'small'].includes(o.size)) throw new Error(`real vocab: size full, mid or small, not ${o.size}`);
  const t0 = performance.now();
  const folder = writeQwenShaped(FIXTURES_DIR, o.size);
  const file = join(folder, 'onnx', 'model_q4f16.onnx');
  const spec = qwenShapedSpec(o.size);
  o.log(`real vocab: ${qwenShapedFixture(o.size)} (${(statSync(file).size / 1e6).toFixed(0)} MB, written or found in ${round((performance.now() - t0) / 1000, 1)} s)`);

  const h = await hearth(folder, o);
  const prompt = h.streams[o.streams[0]!]!.prompt_tokens;
  const graph: Record<number, GraphRate> = await graphDecodeRates(file, { device: 'cpu', batches: o.streams, promptTokens: prompt, steps: o.maxTokens });
  o.log(`real vocab, graph alone: ${o.streams.map((c) => `batch ${c} ${graph[c]!.step_ms} ms a step, ${graph[c]!.tokens_per_s} tok/s`).join('; ')}`);
  const peer = await llamaCpp(o.size, o);

  const vsGraph = Object.fromEntries(o.streams.map((c) => [c, round(h.streams[c]!.aggregate_tokens_per_s / graph[c]!.tokens_per_s)]));
  const { vsLlama, targets } = againstLlamaCpp(h.streams, peer.forms.Q4_0?.best);

  return {
    model: {
      fixture: qwenShapedFixture(o.size), size: o.size, file: 'onnx/model_q4f16.onnx', file_bytes: statSync(file).size,
      dims: { ...spec.dims, vocab: spec.vocabSize, tied_embeddings: true },
      form: "onnxruntime-genai builder's fused q4f16 (GroupQueryAttention, MatMulNBits block 32, 4-bit tied embeddings, float16 activations and KV)",
    },
    settings: { max_tokens: o.maxTokens, repeats: o.repeats, streams: o.streams, engine: 'the engine alone in this process (no worker, no HTTP), prefix cache off, greedy, EOS ignored; whole rows: sampleFrom whole-rows, one round' },
    hearth: h.streams,
    /** The same with every row read whole (sampleFrom 'whole-rows': the path before the sampling head). */
    hearth_whole_rows: h.whole_rows,
    graph_alone: graph,
    hearth_vs_graph: vsGraph,
    llama_cpp: peer,
    hearth_vs_llama_cpp_q4_0: vsLlama,
    targets,
    seconds: round((performance.now() - t0) / 1000),
  };
}

/** The results as text tables, the targets marked. */
export function realVocabTable(r: RealVocabResults): string {
  const pad = (cells: (string | number)[], widths: number[]) => cells.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]!) : String(c).padStart(widths[i]!))).join('  ');
  const d = r.model.dims;
  const lines = [`Real vocabulary on the CPU: ${r.model.fixture} (${d.layers} layers, hidden ${d.hidden}, vocabulary ${d.vocab}; ${(r.model.file_bytes / 1e6).toFixed(0)} MB q4f16), ${r.settings.max_tokens} new tokens, median of ${r.settings.repeats}`];
  const w = [30, ...r.settings.streams.map(() => 10)];
  lines.push(pad(['', ...r.settings.streams.map((c) => `${c} stream${c > 1 ? 's' : ''}`)], w));
  const row = (label: string, f: (c: number) => number | string | undefined) => lines.push(pad([label, ...r.settings.streams.map((c) => f(c) ?? '-')], w));
  row('Hearth, aggregate tok/s', (c) => r.hearth[c]?.aggregate_tokens_per_s);
  row('Hearth, decode a stream', (c) => r.hearth[c]?.per_stream_decode_tokens_per_s);
  row('Hearth, TTFT ms', (c) => r.hearth[c]?.ttft_ms);
  row('graph alone, tok/s', (c) => r.graph_alone[c]?.tokens_per_s);
  row('Hearth ÷ graph', (c) => r.hearth_vs_graph[c]);
  const q4 = r.llama_cpp.forms.Q4_0?.best;
  row('llama.cpp Q4_0, tok/s (best)', (c) => (c === 1 ? q4?.batch1_tokens_per_s : q4?.concurrent_tokens_per_s[c]));
  row('Hearth ÷ llama.cpp Q4_0', (c) => r.hearth_vs_llama_cpp_q4_0[c === 1 ? '1 stream' : `${c} concurrent`]?.ratio);
  lines.push('', 'Step loop, ms a row (rows sampled: decode rows and first tokens):');
  const phases = Object.keys(r.hearth[r.settings.streams[0]!]!.step_breakdown.phases_ms_per_row);
  for (const p of phases) row(`  ${p}`, (c) => r.hearth[c]?.step_breakdown.phases_ms_per_row[p]);
  row('  host a row (all but graph)', (c) => r.hearth[c]?.step_breakdown.host_ms_per_row);
  row('  host a row, head run apart', (c) => r.hearth[c]?.step_breakdown.host_ms_per_row_without_head);
  row('  V8 GC pauses a row (any phase)', (c) => r.hearth[c]?.gc.ms_per_row);
  row('  graph alone: V8 GC a row', (c) => r.graph_alone[c]?.gc_ms_per_row);
  row('  host a row, whole rows', (c) => r.hearth_whole_rows[c]?.step_breakdown.host_ms_per_row);
  row('  aggregate tok/s, whole rows', (c) => r.hearth_whole_rows[c]?.aggregate_tokens_per_s);
  for (const [type, f] of Object.entries(r.llama_cpp.forms)) {
    for (const [t, x] of Object.entries(f.threads)) lines.push(`${r.llama_cpp.engine} ${type}, ${t} thread(s): one request ${x.batch1_tokens_per_s} tok/s (decode ${x.batch1_decode_tokens_per_s}); lockstep ${Object.entries(x.concurrent_tokens_per_s).map(([c, v]) => `${c}: ${v}`).join(', ')} tok/s`);
  }
  for (const [name, ok] of Object.entries(r.targets)) lines.push(`  [${ok === null ? 'no figure' : ok ? 'met' : 'not met'}] ${name}`);
  return lines.join('\n');
}

async function main() {
  const { values: args } = parseArgs({ options: { quick: { type: 'boolean', default: false }, size: { type: 'string' }, out: { type: 'string' } } });
  const env = process.env;
  const quick = args.quick;
  const r = await measureRealVocab({
    size: (args.size ?? env.BENCH_REAL_VOCAB ?? (quick ? 'small' : undefined)) as QwenShapedSize | undefined,
    maxTokens: quick ? 4 : Number(env.BENCH_TOKENS ?? 64),
    repeats: quick ? 1 : Number(env.BENCH_REPEATS ?? 3),
    ...(quick ? { llamaThreads: [1] } : {}),
    log: (line) => console.log(`[bench:real-vocab] ${line}`),
  });
  const out = args.out ?? (quick ? join(tmpdir(), 'hearth-results-real-vocab-quick.json') : join(import.meta.dirname, 'results-real-vocab.json'));
  const machine = { cpu: cpus()[0]?.model, cores: cpus().length, node: process.version };
  writeFileSync(out, `${JSON.stringify({ machine, date: new Date().toISOString(), quick, ...r }, null, 2)}\n`);
  console.log(`\n${realVocabTable(r)}\n\nwrote ${out}`);
}

if (process.argv[1] && realpathSync(process.argv[1]) === import.meta.filename) await main();
