// The peer: llama.cpp (node-llama-cpp's prebuilt CPU binary, never built or downloaded) on
// GGUF files of the bench model's own weights (models/gguf), in F32, F16, Q8_0 and Q4_0, at
// 1 and 2 threads. Measured as Hearth's bench measures itself:
//  - batch 1: one request (a short chat prompt, then max_tokens greedy tokens), tokens ÷ its time;
//  - 8 concurrent: 8 sequences of one context decoded in lockstep, each step's 8 tokens queued in
//    the same turn so that llama.cpp decodes them as one batch (as llama-server steps its slots);
//  - long context: decode tok/s after a 50-token and after a 1,800-token prompt, and their ratio.
// `npm run bench:llama-cpp` runs this part alone and prints its table (beside the Hearth figures
// recorded in bench/results.json, when there are some); `npm run bench` calls it and records it.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { getLlama, LlamaLogLevel, readGgufFileInfo, type Llama, type LlamaContextSequence, type LlamaModel, type Token } from 'node-llama-cpp';
import { benchChat, fixtureTokenizer, FIXTURES_DIR } from '../models/index.js';
import { GGUF_TYPES, writeLlamaGguf, type LlamaGgufType } from '../models/gguf/llama.js';
import { BpeEncoder } from '../models/tokenizer/bpe.js';

export const GGUF_DIR = join(FIXTURES_DIR, 'bench-chat-gguf');
const FINGERPRINT_KEY = 'hearth.weights_sha256';
/** Bumped when the writer's output changes for the same weights. */
const WRITER_VERSION = 1;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

export interface LlamaCppOptions {
  maxTokens?: number;
  repeats?: number;
  threads?: number[];
  types?: LlamaGgufType[];
  shortPrompt?: number;
  /** Prompt lengths of the long-context figure: decode after `shortPrompt` and after `longPrompt` tokens. */
  longPrompt?: number;
  log?: (line: string) => void;
}

export interface LlamaCppRun {
  /** One request: prompt then max_tokens, tokens ÷ the request's time. */
  batch1_tokens_per_s: number;
  /** The same request's decode alone (after its first token). */
  batch1_decode_tokens_per_s: number;
  /** 8 sequences in lockstep: 8 × max_tokens ÷ the wall time, prefill included. */
  concurrency8_tokens_per_s: number;
  long_context_decode: { short_prompt_tokens: number; short_prompt_tokens_per_s: number; long_prompt_tokens: number; long_prompt_tokens_per_s: number; ratio: number };
}

export interface LlamaCppResults {
  engine: string;
  settings: { max_tokens: number; repeats: number; threads: number[]; flash_attention: string; kv_cache: string };
  forms: Record<string, { file_bytes: number; threads: Record<number, LlamaCppRun>; best: LlamaCppRun & { threads: Record<string, number> } }>;
}

/** A fingerprint of the weights (and the writer), kept in each GGUF's metadata. */
function fingerprint(w: ReturnType<typeof benchChat>): string {
  const h = createHash('sha256').update(JSON.stringify({ config: w.config, writer: WRITER_VERSION }));
  const add = (a: Float32Array) => h.update(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
  add(w.embed);
  for (const l of w.layers) for (const t of Object.values(l)) add(t as Float32Array);
  add(w.finalNorm);
  add(w.lmHead);
  return h.digest('hex');
}

export async function fileFingerprint(path: string): Promise<string | undefined> {
  if (!existsSync(path)) return undefined;
  try {
    const info = await readGgufFileInfo(path, { readTensorInfo: false, logWarnings: false, ignoreKeys: ['tokenizer.ggml.tokens', 'tokenizer.ggml.merges', 'tokenizer.ggml.token_type'] });
    return (info.metadata as unknown as { hearth?: { weights_sha256?: string } }).hearth?.weights_sha256;
  } catch {
    return undefined;
  }
}

/** The bench model's GGUF files (GGUF_DIR, git-ignored with the fixtures), written where missing or stale. */
export async function benchGgufs(types: readonly LlamaGgufType[] = GGUF_TYPES, log: (line: string) => void = () => undefined): Promise<Record<string, string>> {
  mkdirSync(GGUF_DIR, { recursive: true });
  const w = benchChat();
  const fp = fingerprint(w);
  const paths: Record<string, string> = {};
  for (const type of types) {
    const path = join(GGUF_DIR, `bench-chat-${type}.gguf`);
    paths[type] = path;
    if ((await fileFingerprint(path)) === fp) continue;
    log(`writing ${path}`);
    writeLlamaGguf(path, w, fixtureTokenizer(), type, { name: 'bench-chat', metadata: [[FINGERPRINT_KEY, fp]] });
  }
  return paths;
}

/** Deterministic word-like text (the same kind of filler as run.ts's). */
export function filler(seed: number, words: number): string {
  const list = ['the', 'river', 'stone', 'light', 'quiet', 'market', 'winter', 'garden', 'table', 'window', 'signal', 'paper'];
  let x = seed;
  return Array.from({ length: words }, () => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return list[x % list.length];
  }).join(' ');
}

/** A ChatML user prompt of exactly `tokens` tokens (the filler cut to fit), as token ids. */
export function promptOfLength(enc: BpeEncoder, tokens: number, seed: number): number[] {
  const head = enc.encode('<|im_start|>user\n');
  const tail = enc.encode('<|im_end|>\n<|im_start|>assistant\n');
  const body = enc.encode(filler(seed, tokens));
  const n = tokens - head.length - tail.length;
  if (n < 1 || body.length < n) throw new Error(`no prompt of ${tokens} tokens`);
  return [...head, ...body.slice(0, n), ...tail];
}

const chatIds = (enc: BpeEncoder, text: string) => enc.encode(`<|im_start|>user\n${text}<|im_end|>\n<|im_start|>assistant\n`);

/** Evaluates `tokens` into the sequence and returns the greedy next token. */
export async function next(seq: LlamaContextSequence, tokens: readonly number[]): Promise<number> {
  const last = tokens.length - 1;
  const res = await seq.controlledEvaluate(tokens.map((t, i) => (i === last ? [t as Token, { generateNext: { token: true } }] : (t as Token))));
  const tok = res[last]?.next.token;
  if (tok == null) throw new Error('llama.cpp returned no token');
  return tok;
}

/** One greedy request on a fresh sequence state: times of the first token and of the end. */
export async function request(seq: LlamaContextSequence, prompt: readonly number[], maxTokens: number): Promise<{ total: number; decode: number }> {
  await seq.clearHistory();
  const t0 = performance.now();
  let tok = await next(seq, prompt);
  const first = performance.now();
  for (let n = 1; n < maxTokens; n++) tok = await next(seq, [tok]);
  const end = performance.now();
  return { total: (end - t0) / 1000, decode: (end - first) / 1000 };
}

/** Decode rate after `prompt` (prefilled once): max_tokens greedy tokens, `repeats` times, the decoded tail erased between. */
async function decodeAfter(seq: LlamaContextSequence, prompt: readonly number[], maxTokens: number, repeats: number): Promise<number> {
  await seq.clearHistory();
  const first = await next(seq, prompt);
  const rates: number[] = [];
  for (let r = 0; r < repeats; r++) {
    const t0 = performance.now();
    let tok = first;
    for (let n = 1; n < maxTokens; n++) tok = await next(seq, [tok]);
    rates.push((maxTokens - 1) / ((performance.now() - t0) / 1000));
    await seq.eraseContextTokenRanges([{ start: prompt.length, end: seq.nextTokenIndex }]);
  }
  return median(rates);
}

/** 8 sequences in lockstep: every step queues the 8 evaluations in one turn (one batch in llama.cpp). */
export async function lockstep(seqs: LlamaContextSequence[], prompts: number[][], maxTokens: number): Promise<number> {
  await Promise.all(seqs.map((s) => s.clearHistory()));
  const t0 = performance.now();
  let toks = await Promise.all(seqs.map((s, i) => next(s, prompts[i]!)));
  for (let n = 1; n < maxTokens; n++) toks = await Promise.all(seqs.map((s, i) => next(s, [toks[i]!])));
  return (seqs.length * maxTokens) / ((performance.now() - t0) / 1000);
}

async function measureForm(model: LlamaModel, threads: number, o: Required<LlamaCppOptions>, enc: BpeEncoder): Promise<LlamaCppRun> {
  const { maxTokens, repeats } = o;
  // Batch 1 and long context: one sequence with room for the long prompt and its decode.
  const ctx1 = await model.createContext({ contextSize: o.longPrompt + maxTokens + 64, threads, flashAttention: 'auto' });
  const seq = ctx1.getSequence();
  const probe = chatIds(enc, 'Overhead probe: tell me something.');
  await request(seq, probe, 4); // warm-up
  const runs = [];
  for (let r = 0; r < repeats; r++) runs.push(await request(seq, probe, maxTokens));
  const shortPrompt = promptOfLength(enc, o.shortPrompt, 9000);
  const longPrompt = promptOfLength(enc, o.longPrompt, 9001);
  const shortRate = await decodeAfter(seq, shortPrompt, maxTokens, repeats);
  const longRate = await decodeAfter(seq, longPrompt, maxTokens, repeats);
  await ctx1.dispose();

  // 8 sequences, each with its own cells for a short prompt and max_tokens.
  const ctx8 = await model.createContext({ sequences: 8, contextSize: 128 + maxTokens, threads, flashAttention: 'auto' });
  const seqs = Array.from({ length: 8 }, () => ctx8.getSequence());
  const prompts = (r: number) => seqs.map((_, i) => chatIds(enc, `Round ${r}, request ${i}: ${filler(r * 100 + i, 12)}`));
  await lockstep(seqs, prompts(99), 4); // warm-up
  const rates8: number[] = [];
  for (let r = 0; r < repeats; r++) rates8.push(await lockstep(seqs, prompts(r), maxTokens));
  await ctx8.dispose();

  return {
    batch1_tokens_per_s: round(maxTokens / median(runs.map((x) => x.total))),
    batch1_decode_tokens_per_s: round((maxTokens - 1) / median(runs.map((x) => x.decode))),
    concurrency8_tokens_per_s: round(median(rates8)),
    long_context_decode: {
      short_prompt_tokens: shortPrompt.length,
      short_prompt_tokens_per_s: round(shortRate),
      long_prompt_tokens: longPrompt.length,
      long_prompt_tokens_per_s: round(longRate),
      ratio: round(longRate / shortRate),
    },
  };
}

/** Each figure at the thread count that gives its best (the long-context ratio: that of the best long-context decode). */
function best(byThreads: Record<number, LlamaCppRun>): LlamaCppRun & { threads: Record<string, number> } {
  const entries = Object.entries(byThreads).map(([t, r]) => [Number(t), r] as const);
  const pick = (f: (r: LlamaCppRun) => number) => entries.reduce((a, b) => (f(b[1]) > f(a[1]) ? b : a));
  const b1 = pick((r) => r.batch1_tokens_per_s);
  const dec = pick((r) => r.batch1_decode_tokens_per_s);
  const c8 = pick((r) => r.concurrency8_tokens_per_s);
  const lc = pick((r) => r.long_context_decode.long_prompt_tokens_per_s);
  return {
    batch1_tokens_per_s: b1[1].batch1_tokens_per_s,
    batch1_decode_tokens_per_s: dec[1].batch1_decode_tokens_per_s,
    concurrency8_tokens_per_s: c8[1].concurrency8_tokens_per_s,
    long_context_decode: lc[1].long_context_decode,
    threads: { batch1: b1[0], batch1_decode: dec[0], concurrency8: c8[0], long_context: lc[0] },
  };
}

let llamaInstance: Promise<Llama> | undefined;
/** The prebuilt CPU binary; never a build, never a download. */
export const cpuLlama = () => (llamaInstance ??= getLlama({ gpu: false, build: 'never', skipDownload: true, progressLogs: false, logLevel: LlamaLogLevel.error, maxThreads: 0 }));

export async function measureLlamaCpp(options: LlamaCppOptions = {}): Promise<LlamaCppResults> {
  const o: Required<LlamaCppOptions> = {
    maxTokens: 64, repeats: 3, threads: [1, 2], types: [...GGUF_TYPES], shortPrompt: 50, longPrompt: 1800, log: () => undefined,
    ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)),
  };
  const paths = await benchGgufs(o.types, o.log);
  const llama = await cpuLlama();
  const enc = new BpeEncoder(fixtureTokenizer());
  try {
    return await measureWith(llama, paths, enc, o);
  } finally {
    await llama.dispose();
    llamaInstance = undefined;
  }
}

async function measureWith(llama: Llama, paths: Record<string, string>, enc: BpeEncoder, o: Required<LlamaCppOptions>): Promise<LlamaCppResults> {
  const forms: LlamaCppResults['forms'] = {};
  for (const type of o.types) {
    const model = await llama.loadModel({ modelPath: paths[type]! });
    const byThreads: Record<number, LlamaCppRun> = {};
    for (const t of o.threads) {
      byThreads[t] = await measureForm(model, t, o, enc);
      const r = byThreads[t];
      o.log(`llama.cpp ${type}, ${t} thread${t > 1 ? 's' : ''}: batch-1 ${r.batch1_tokens_per_s} tok/s (decode ${r.batch1_decode_tokens_per_s}), 8 lockstep ${r.concurrency8_tokens_per_s} tok/s, decode after ${r.long_context_decode.short_prompt_tokens} / ${r.long_context_decode.long_prompt_tokens} prompt tokens ${r.long_context_decode.short_prompt_tokens_per_s} / ${r.long_context_decode.long_prompt_tokens_per_s} tok/s (${r.long_context_decode.ratio})`);
    }
    await model.dispose();
    forms[type] = { file_bytes: statSync(paths[type]!).size, threads: byThreads, best: best(byThreads) };
  }
  const release = llama.llamaCppRelease;
  return {
    engine: `llama.cpp ${release.release} via node-llama-cpp ${nodeLlamaCppVersion()} (${llama.buildType} CPU binary)`,
    settings: { max_tokens: o.maxTokens, repeats: o.repeats, threads: o.threads, flash_attention: 'auto', kv_cache: 'F16' },
    forms,
  };
}

function nodeLlamaCppVersion(): string {
  try {
    const pkg = join(import.meta.dirname, '..', 'node_modules', 'node-llama-cpp', 'package.json');
    return (JSON.parse(readFileSync(pkg, 'utf8')) as { version: string }).version;
  } catch {
    return '?';
  }
}

/** The GGUF type a Hearth form is compared with, from its ONNX file (or, without one, its name). */
export function ggufTypeFor(form: string, file?: string): LlamaGgufType | undefined {
  const f = file ?? (form === 'fp32' ? 'model.onnx' : `model_${form}.onnx`);
  if (/_(q4|q4f16|int4|bnb4)\.onnx$/.test(f) || /\b(q4|int4)\b/.test(form)) return 'Q4_0';
  if (/_(q8|int8|uint8|quantized)\.onnx$/.test(f)) return 'Q8_0';
  if (/_fp16\.onnx$/.test(f)) return 'F16';
  if (/^model\.onnx$/.test(f)) return 'F32';
  return undefined;
}

/** Hearth's figures for one form, as run.ts records them (forms_engine_alone). */
export interface HearthForm {
  file?: string;
  batch1_tokens_per_s: number;
  concurrency8_tokens_per_s: number;
  long_context_ratio?: number;
}

interface Figure { hearth: number; llama_cpp: number; llama_cpp_threads: number; ratio: number }
export interface Comparison {
  /** Per Hearth form: its figure, llama.cpp's at its best thread count on the same GGUF type, Hearth ÷ llama.cpp. */
  rows: { form: string; gguf: LlamaGgufType; batch1: Figure; concurrency8: Figure; long_context_ratio?: Figure }[];
  /** The issue's targets, met by the best q4 form. */
  targets: Record<string, boolean>;
}

/** Hearth ÷ llama.cpp per form and figure (llama.cpp at its best thread count), and the targets. */
export function hearthVsLlamaCpp(hearth: Record<string, HearthForm>, peer: LlamaCppResults): Comparison {
  const rows: Comparison['rows'] = [];
  for (const [form, h] of Object.entries(hearth)) {
    const gguf = ggufTypeFor(form, h.file);
    const p = gguf && peer.forms[gguf];
    if (!gguf || !p) continue;
    const fig = (ours: number, theirs: number, threads: number): Figure => ({ hearth: ours, llama_cpp: theirs, llama_cpp_threads: threads, ratio: round(ours / theirs) });
    rows.push({
      form,
      gguf,
      batch1: fig(h.batch1_tokens_per_s, p.best.batch1_tokens_per_s, p.best.threads.batch1!),
      concurrency8: fig(h.concurrency8_tokens_per_s, p.best.concurrency8_tokens_per_s, p.best.threads.concurrency8!),
      ...(h.long_context_ratio !== undefined ? { long_context_ratio: fig(h.long_context_ratio, p.best.long_context_decode.ratio, p.best.threads.long_context!) } : {}),
    });
  }
  const q4 = rows.filter((r) => r.gguf === 'Q4_0');
  const bestOf = (xs: number[]) => (xs.length ? Math.max(...xs) : NaN);
  const targets: Record<string, boolean> = {};
  if (q4.length) {
    targets['q4 batch-1 >= 0.8x llama.cpp Q4_0'] = bestOf(q4.map((r) => r.batch1.ratio)) >= 0.8;
    targets['q4 8 concurrent >= 0.8x llama.cpp Q4_0'] = bestOf(q4.map((r) => r.concurrency8.ratio)) >= 0.8;
    const lc = q4.filter((r) => r.long_context_ratio);
    if (lc.length) targets["q4 long-context ratio >= llama.cpp Q4_0's"] = bestOf(lc.map((r) => r.long_context_ratio!.ratio)) >= 1;
  }
  const fp32 = rows.find((r) => r.form === 'fp32');
  if (fp32) targets['fp32 8 concurrent ahead of llama.cpp F32'] = fp32.concurrency8.ratio > 1;
  return { rows, targets };
}

/** The peer's figures as a text table, and the comparison with Hearth when given. */
export function llamaCppTable(peer: LlamaCppResults, comparison?: Comparison, hearthNote = ''): string {
  const lines: string[] = [];
  const pad = (cells: (string | number)[], widths: number[]) => cells.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]!) : String(c).padStart(widths[i]!))).join('  ');
  const any = Object.values(peer.forms)[0]?.threads[peer.settings.threads[0]!]?.long_context_decode;
  const w1 = [6, 7, 8, 8, 10, 10, 10, 6, 6];
  lines.push(`${peer.engine}: ${peer.settings.max_tokens} tokens a request, median of ${peer.settings.repeats}; flash attention ${peer.settings.flash_attention}, KV cache ${peer.settings.kv_cache}`);
  lines.push(pad(['form', 'threads', 'batch-1', 'decode', '8 lockstep', `after ${any?.short_prompt_tokens ?? '?'}`, `after ${any?.long_prompt_tokens ?? '?'}`, 'ratio', 'MB'], w1));
  for (const [type, form] of Object.entries(peer.forms)) {
    for (const [t, r] of Object.entries(form.threads)) {
      lines.push(pad([type, t, r.batch1_tokens_per_s, r.batch1_decode_tokens_per_s, r.concurrency8_tokens_per_s, r.long_context_decode.short_prompt_tokens_per_s, r.long_context_decode.long_prompt_tokens_per_s, r.long_context_decode.ratio, (form.file_bytes / 1e6).toFixed(1)], w1));
    }
  }
  lines.push('tok/s. batch-1: a whole request over its tokens; decode: after its first token; 8 lockstep: 8 sequences of one context, one batch a step; after N: decode after an N-token prompt.');
  if (comparison?.rows.length) {
    lines.push('', `Hearth vs llama.cpp at its best thread count (ratio = Hearth ÷ llama.cpp)${hearthNote ? `; ${hearthNote}` : ''}:`);
    const w2 = [30, 5, 8, 9, 6, 8, 9, 6, 7, 9, 6];
    lines.push(pad(['Hearth form', 'GGUF', 'batch-1', 'llama.cpp', 'ratio', '8 conc.', 'llama.cpp', 'ratio', 'long', 'llama.cpp', 'ratio'], w2));
    for (const r of comparison.rows) {
      const lc = r.long_context_ratio;
      lines.push(pad([r.form, r.gguf, r.batch1.hearth, r.batch1.llama_cpp, r.batch1.ratio, r.concurrency8.hearth, r.concurrency8.llama_cpp, r.concurrency8.ratio, lc?.hearth ?? '-', lc?.llama_cpp ?? '-', lc?.ratio ?? '-'], w2));
    }
    for (const [name, ok] of Object.entries(comparison.targets)) lines.push(`  [${ok ? 'met' : 'not met'}] ${name}`);
  }
  return lines.join('\n');
}

/** The Hearth figures run.ts recorded in bench/results.json, if any (forms_engine_alone, or the older dtypes_engine_alone). */
export function recordedHearthFigures(file = join(import.meta.dirname, 'results.json')): { forms: Record<string, HearthForm>; date?: string; longPrompt?: number } | undefined {
  if (!existsSync(file)) return undefined;
  const r = JSON.parse(readFileSync(file, 'utf8')) as {
    date?: string;
    forms_engine_alone?: Record<string, HearthForm & { long_prompt_tokens?: number }>;
    dtypes_engine_alone?: Record<string, HearthForm>;
  };
  const forms = r.forms_engine_alone ?? r.dtypes_engine_alone;
  if (!forms) return undefined;
  return { forms, date: r.date, longPrompt: r.forms_engine_alone?.fp32?.long_prompt_tokens };
}

async function main() {
  const env = process.env;
  const list = <T>(v: string | undefined, parse: (s: string) => T) => (v ? v.split(',').map((s) => parse(s.trim())) : undefined);
  const recorded = recordedHearthFigures();
  const peer = await measureLlamaCpp({
    maxTokens: Number(env.BENCH_TOKENS ?? 64),
    ...(recorded?.longPrompt ? { longPrompt: recorded.longPrompt } : {}),
    repeats: Number(env.BENCH_REPEATS ?? 3),
    threads: list(env.LLAMA_CPP_THREADS, Number) ?? [1, 2],
    types: list(env.LLAMA_CPP_TYPES, (s) => s as LlamaGgufType) ?? [...GGUF_TYPES],
    log: (line) => console.log(`[bench:llama-cpp] ${line}`),
  });
  const comparison = recorded ? hearthVsLlamaCpp(recorded.forms, peer) : undefined;
  console.log(`\n${llamaCppTable(peer, comparison, recorded ? `Hearth's figures from bench/results.json of ${recorded.date ?? 'an earlier run'}, another sitting` : '')}`);
}

// Run as a script (npm run bench:llama-cpp), not when run.ts imports it.
if (process.argv[1] && realpathSync(process.argv[1]) === import.meta.filename) await main();
