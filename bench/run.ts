// npm run bench: throughput, TTFT, HTTP overhead and the bandwidth bound on the
// bench preset model, all in one run on this machine. Writes bench/results.json
// and bench/chart.svg. Figures are medians; ratios are taken within this run. Beside the bench
// model, a model with a real vocabulary (real-vocab.ts: the Qwen-shaped q4f16, 151,936 tokens)
// and llama.cpp on the same weights; and speculative decoding on and off (speculative.ts).
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { env as hf, pipeline } from '@huggingface/transformers';
import OpenAI from 'openai';
import { FIXTURES_DIR, writeFixtures } from '../models/index.js';
import type { QwenShapedSize } from '../models/exports/qwen-shaped.js';
import { startNodeEngine } from '../src/engine/client/node.js';
import type { SamplingParams } from '../src/engine/protocol.js';
import { serve } from '../src/front/node/serve.js';
import { modelsSettled } from '../src/runtime.js';
import { measureCeilings, measureFormCeilings, openGraphTimer, type FormCeilings } from './ceilings.js';
import { barChart, stack } from './chart.js';
import { maskingCost, qwen3Tokenizer } from './grammar-mask.js';
import { hearthVsLlamaCpp, llamaCppTable, measureLlamaCpp } from './llama-cpp.js';
import { measureRealVocab, realVocabTable } from './real-vocab.js';
import { measureSpeculative, speculativeTable } from './speculative.js';
import { measureSpeech } from './speech.js';
import { perStep, readLoop } from './step-breakdown.js';

const MODEL = 'svc/bench-chat';
const MAX_TOKENS = Number(process.env.BENCH_TOKENS ?? 64);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const CONCURRENCY = [1, 4, 8, 16];
const BENCH = join(import.meta.dirname, '.');

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;
const log = (s: string) => console.log(`[bench] ${s}`);

/** Deterministic filler text: ~`tokens` tokens of word-like text for long prompts. */
function filler(seed: number, tokens: number): string {
  const words = ['the', 'river', 'stone', 'light', 'quiet', 'market', 'winter', 'garden', 'table', 'window', 'signal', 'paper'];
  let x = seed;
  return Array.from({ length: tokens }, () => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return words[x % words.length];
  }).join(' ');
}

interface Timed {
  start: number;
  first: number;
  end: number;
  tokens: number;
  promptTokens: number;
  cached: number;
}

async function streamOnce(client: OpenAI, messages: OpenAI.ChatCompletionMessageParam[], maxTokens: number): Promise<Timed> {
  const start = performance.now();
  const stream = await client.chat.completions.create({
    model: MODEL,
    messages,
    max_tokens: maxTokens,
    temperature: 0,
    stream: true,
    stream_options: { include_usage: true },
  });
  let first = 0;
  let usage: OpenAI.CompletionUsage | undefined;
  for await (const chunk of stream) {
    if (!first && chunk.choices[0]?.delta.content) first = performance.now();
    if (chunk.usage) usage = chunk.usage;
  }
  return {
    start,
    first,
    end: performance.now(),
    tokens: usage!.completion_tokens,
    promptTokens: usage!.prompt_tokens,
    cached: usage!.prompt_tokens_details?.cached_tokens ?? 0,
  };
}

async function throughput(client: OpenAI, concurrency: number, round: number) {
  const runs = await Promise.all(
    Array.from({ length: concurrency }, (_, i) =>
      streamOnce(client, [{ role: 'user', content: `Round ${round}, request ${i}: ${filler(round * 100 + i, 12)}` }], MAX_TOKENS),
    ),
  );
  const wall = (Math.max(...runs.map((r) => r.end)) - Math.min(...runs.map((r) => r.start))) / 1000;
  const tokens = runs.reduce((n, r) => n + r.tokens, 0);
  const decodeRates = runs.map((r) => (r.tokens - 1) / ((r.end - r.first) / 1000));
  return { tokensPerSecond: tokens / wall, perStreamDecode: median(decodeRates) };
}

async function baselineTransformersJs(prompts: string[]): Promise<number> {
  hf.localModelPath = FIXTURES_DIR;
  hf.allowRemoteModels = false;
  const generate = await pipeline('text-generation', 'bench-chat', { device: 'cpu', dtype: 'fp32' });
  await generate('warm up', { max_new_tokens: 4, do_sample: false });
  const t0 = performance.now();
  for (const p of prompts) await generate(p, { max_new_tokens: MAX_TOKENS, do_sample: false });
  const seconds = (performance.now() - t0) / 1000;
  await generate.dispose();
  // bench-chat never emits EOS within 512 tokens, so each call makes MAX_TOKENS.
  return (prompts.length * MAX_TOKENS) / seconds;
}

function copyBandwidth(): number {
  const bytes = 256 * 2 ** 20;
  const src = Buffer.alloc(bytes, 1);
  const dst = Buffer.alloc(bytes);
  const rates: number[] = [];
  for (let i = 0; i < 7; i++) {
    const t0 = performance.now();
    src.copy(dst);
    rates.push(bytes / ((performance.now() - t0) / 1000));
  }
  return median(rates);
}

/** An engine called directly (no HTTP), on a fixture folder's file for `dtype`: one request, or 8 at once. */
async function directEngine(dtype = 'fp32', folder = 'bench-chat') {
  // Speculation off here and below: these figures are read against per-step ceilings and bounds (speculative.ts measures it).
  const engine = startNodeEngine({ speculative: 'off' });
  const entry = {
    id: MODEL, task: 'chat' as const, class: '40M', context_length: 4096,
    source: join(FIXTURES_DIR, folder), dtype: { cpu: dtype }, price: { input_per_1m: 0, output_per_1m: 0 },
  };
  await engine.load([entry]);
  await modelsSettled(engine);
  const sampling: SamplingParams = {
    max_tokens: MAX_TOKENS, temperature: 0, top_p: 1, top_k: -1, min_p: 0, presence_penalty: 0,
    frequency_penalty: 0, stop: [], stop_token_ids: [], ignore_eos: false, logprobs: -1,
  };
  let n = 0;
  return {
    /** Milliseconds for one request. */
    async one(messages: { role: string; content: string }[]): Promise<number> {
      const t0 = performance.now();
      await engine.generate({ id: `d${n++}`, model: MODEL, prompt: { messages }, sampling }, () => undefined);
      return performance.now() - t0;
    },
    /** Decode tokens/s of one request after its first token (its prompt's prefill left out), and its prompt's length. */
    async decodeRate(messages: { role: string; content: string }[]): Promise<{ rate: number; promptTokens: number }> {
      let first = 0;
      const r = await engine.generate({ id: `l${n++}`, model: MODEL, prompt: { messages }, sampling }, () => void (first ||= performance.now()));
      return { rate: (r.completion_tokens - 1) / ((performance.now() - first) / 1000), promptTokens: r.prompt_tokens };
    },
    /** Aggregate tokens/s of one round of 8 requests at once, and their mean prompt length. */
    async concurrentRound(r: number): Promise<{ rate: number; promptTokens: number }> {
      const t0 = performance.now();
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          engine.generate({ id: `c${r}-${i}-${n++}`, model: MODEL, prompt: { messages: [{ role: 'user', content: `Round ${r}, request ${i}: ${filler(r * 100 + i, 12)}` }] }, sampling }, () => undefined),
        ),
      );
      const rate = results.reduce((k, x) => k + x.completion_tokens, 0) / ((performance.now() - t0) / 1000);
      return { rate, promptTokens: Math.round(results.reduce((k, x) => k + x.prompt_tokens, 0) / results.length) };
    },
    /** Aggregate tokens/s of 8 requests at once, median of REPEATS rounds. */
    async concurrent8(): Promise<number> {
      const rates: number[] = [];
      for (let r = 0; r < REPEATS; r++) rates.push((await this.concurrentRound(r)).rate);
      return median(rates);
    },
    close: () => engine.terminate(),
  };
}

/**
 * The bench model's weights in the forms people download, each on the engine alone: the plain
 * exports (fp32, fp16, q4 with MatMulNBits blocks of 16 and float compute), the steps from that q4
 * to onnxruntime-genai's builder's (block 32, then accuracy_level 4: int8 compute), q4f16 (float16
 * scales, activations and KV, as transformers.js's exports have it), and the
 * builder's whole graph (fused GroupQueryAttention, packed QKV, fused norms) in fp32 and int4.
 */
export const FORMS = [
  { form: 'fp32', folder: 'bench-chat', dtype: 'fp32', file: 'model.onnx' },
  { form: 'fp16', folder: 'bench-chat', dtype: 'fp16', file: 'model_fp16.onnx' },
  { form: 'q4 (block 16)', folder: 'bench-chat', dtype: 'q4', file: 'model_q4.onnx' },
  { form: 'q4 block 32', folder: 'bench-chat-q4-b32', dtype: 'q4', file: 'model_q4.onnx' },
  { form: 'q4 block 32, accuracy_level 4', folder: 'bench-chat-q4-b32-acc4', dtype: 'q4', file: 'model_q4.onnx' },
  { form: 'q4f16 (block 32, accuracy_level 4)', folder: 'bench-chat-q4-b32-acc4', dtype: 'q4f16', file: 'model_q4f16.onnx' },
  { form: 'genai fp32', folder: 'bench-chat-genai', dtype: 'fp32', file: 'model.onnx' },
  { form: 'genai q4', folder: 'bench-chat-genai', dtype: 'q4', file: 'model_q4.onnx' },
] as const;

export interface FormFigures {
  folder: string;
  file: string;
  weight_bytes: number;
  batch1_tokens_per_s: number;
  concurrency8_tokens_per_s: number;
  decode_after_short_prompt_tokens_per_s: number;
  decode_after_long_prompt_tokens_per_s: number;
  long_prompt_tokens: number;
  long_context_ratio: number;
  /** onnxruntime's ceilings for this form's graph (ceilings.ts): what no engine around it can beat. */
  ceiling: FormCeilings;
  /** The engine against its graph timed between the engine's own rounds (medians of the rounds' ratios). */
  interleaved: Interleaved;
}

export interface Interleaved {
  /** ms: the graph at batch 8 after the rounds' mean context, the 8 prompts' prefill in one run, batch 1 at the long context. */
  graph_batch8_ms: number;
  graph_prefill8_ms: number;
  graph_long_context_ms: number;
  /** 8 streams ÷ 8 tokens a batch-8 graph run (the issue's ceiling, timed beside each round). */
  concurrency8_vs_graph: number;
  /** 8 streams ÷ the same with the streams' own prompts prefilled: one run of the 8 prompts, then (tokens − 1) batch-8 steps. */
  concurrency8_vs_graph_with_prompts: number;
  /** Decode after the long prompt ÷ the graph's decode step at that context. */
  long_context_decode_vs_graph: number;
}

/**
 * The engine's 8-stream rounds and long-context decodes, each followed at once by the graph's own
 * runs of the same shapes, so that both see the machine alike.
 */
async function interleavedWithGraph(direct: Awaited<ReturnType<typeof directEngine>>, modelPath: string) {
  const graph = await openGraphTimer(modelPath);
  // The engine's worker goes on for a moment after its requests end (its prefix cache, its
  // garbage); graph runs timed at once measured 10-25% slower than a second later.
  const settle = () => new Promise((res) => setTimeout(res, 1000));
  const rounds: { rate: number; b8: number; pf: number }[] = [];
  for (let r = 0; r < REPEATS; r++) {
    const { rate, promptTokens } = await direct.concurrentRound(100 + r);
    await settle();
    rounds.push({ rate, b8: await graph.decode(8, promptTokens + MAX_TOKENS / 2, 7), pf: await graph.prefill(8, promptTokens, 3) });
  }
  const longs: { rate: number; ms: number }[] = [];
  for (let r = 0; r < REPEATS; r++) {
    const { rate, promptTokens } = await direct.decodeRate([{ role: 'user', content: filler(9560 + r, 560) }]);
    await settle();
    longs.push({ rate, ms: await graph.decode(1, promptTokens + MAX_TOKENS / 2, 5) });
  }
  await graph.release();
  const withPrompts = (x: (typeof rounds)[number]) => (8 * MAX_TOKENS * 1000) / (x.pf + (MAX_TOKENS - 1) * x.b8);
  const interleaved: Interleaved = {
    graph_batch8_ms: median(rounds.map((x) => x.b8)),
    graph_prefill8_ms: median(rounds.map((x) => x.pf)),
    graph_long_context_ms: median(longs.map((x) => x.ms)),
    concurrency8_vs_graph: round(median(rounds.map((x) => x.rate / (8000 / x.b8)))),
    concurrency8_vs_graph_with_prompts: round(median(rounds.map((x) => x.rate / withPrompts(x)))),
    long_context_decode_vs_graph: round(median(longs.map((x) => x.rate / (1000 / x.ms)))),
  };
  return interleaved;
}

async function formsEngineAlone(messages: { role: string; content: string }[], only?: string[]): Promise<Record<string, FormFigures>> {
  const out: Record<string, FormFigures> = {};
  for (const f of FORMS.filter((x) => !only || only.includes(x.form))) {
    const direct = await directEngine(f.dtype, f.folder);
    const times: number[] = [];
    for (let i = 0; i <= REPEATS; i++) times.push(await direct.one(messages)); // the first is a warm-up
    const concurrent8 = await direct.concurrent8();
    const after = async (words: number) => {
      const runs = [];
      for (let r = 0; r < REPEATS; r++) runs.push(await direct.decodeRate([{ role: 'user', content: filler(9000 + words + r, words) }]));
      return { rate: median(runs.map((x) => x.rate)), promptTokens: runs[0]!.promptTokens };
    };
    const short = await after(12);
    const long = await after(560);
    const modelPath = join(FIXTURES_DIR, f.folder, 'onnx', f.file);
    const interleaved = await interleavedWithGraph(direct, modelPath);
    await direct.close();
    const ceiling = await measureFormCeilings(modelPath, short.promptTokens + MAX_TOKENS / 2, long.promptTokens + MAX_TOKENS / 2);
    out[f.form] = {
      folder: f.folder,
      file: f.file,
      weight_bytes: statSync(modelPath).size,
      batch1_tokens_per_s: round(MAX_TOKENS / (median(times.slice(1)) / 1000)),
      concurrency8_tokens_per_s: round(concurrent8),
      decode_after_short_prompt_tokens_per_s: round(short.rate),
      decode_after_long_prompt_tokens_per_s: round(long.rate),
      long_prompt_tokens: long.promptTokens,
      long_context_ratio: round(long.rate / short.rate),
      ceiling,
      interleaved,
    };
    const o = out[f.form];
    log(`${f.form}: batch-1 ${o.batch1_tokens_per_s} tok/s, 8 concurrent ${o.concurrency8_tokens_per_s} tok/s, long context ${o.long_context_ratio}x (engine alone); graph alone ${ceiling.batch1_max_tokens_per_s}, ${ceiling.concurrency8_max_tokens_per_s}, ${ceiling.long_context_max_ratio}x; interleaved ${JSON.stringify(interleaved)}`);
  }
  return out;
}

async function main() {
  await writeFixtures({ preset: 'bench', ifMissing: true });
  // A bench-chat written before the q4 and fp16 files existed is written again.
  if (!existsSync(join(FIXTURES_DIR, 'bench-chat', 'onnx', 'model_q4.onnx'))) await writeFixtures({ preset: 'bench' });
  // BENCH_FORMS='fp32,genai q4' measures only those forms on the engine alone, into results-forms.json.
  if (process.env.BENCH_FORMS) {
    const forms = await formsEngineAlone([{ role: 'user', content: 'Overhead probe: tell me something.' }], process.env.BENCH_FORMS.split(','));
    const out = { machine: { cpu: cpus()[0]?.model, cores: cpus().length, node: process.version }, date: new Date().toISOString(), settings: { max_tokens: MAX_TOKENS, repeats: REPEATS }, forms_engine_alone: forms };
    writeFileSync(join(BENCH, 'results-forms.json'), `${JSON.stringify(out, null, 2)}\n`);
    return;
  }
  const weightBytes = statSync(join(FIXTURES_DIR, 'bench-chat', 'onnx', 'model.onnx')).size;

  let key = '';
  const server = await serve({
    // The bench measures the engine, not the limits: at 60 requests a minute the
    // 16-stream rounds met 429s and the SDK's retry waits were timed as decode.
    port: 0, models: [MODEL], store: 'memory', rateLimit: 1_000_000, speculative: 'off',
    log: (line) => (key ||= /svc_live_\w+/.exec(line)?.[0] ?? ''),
  });
  const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: key, maxRetries: 10 });
  await streamOnce(client, [{ role: 'user', content: 'warm up' }], 4);

  const results: Record<string, unknown> = {};
  const tput: Record<number, { tokensPerSecond: number; perStreamDecode: number }> = {};
  const breakdown: Record<number, ReturnType<typeof perStep>> = {};
  for (const c of CONCURRENCY) {
    const rounds = [];
    const before = await readLoop(server.url, MODEL);
    for (let r = 0; r < REPEATS; r++) rounds.push(await throughput(client, c, r));
    tput[c] = {
      tokensPerSecond: round(median(rounds.map((x) => x.tokensPerSecond))),
      perStreamDecode: round(median(rounds.map((x) => x.perStreamDecode))),
    };
    breakdown[c] = perStep(before, await readLoop(server.url, MODEL), 1000 / tput[c].perStreamDecode);
    log(`concurrency ${c}: ${tput[c].tokensPerSecond} tok/s aggregate; per step ${JSON.stringify(breakdown[c].phases_ms)} (loop ${breakdown[c].loop_ms} ms of ${breakdown[c].client_step_ms} ms)`);
  }

  // Fairness: a short request's time to first token on an idle server, then while 8 streams decode.
  const short = [{ role: 'user' as const, content: 'Short question?' }];
  const idleTtft: number[] = [];
  const loadedTtft: number[] = [];
  // More rounds than elsewhere: one TTFT is a few tens of ms, and 3 of them swung 2.6× to 4.2× between runs.
  for (let r = 0; r < Math.max(REPEATS, 7); r++) {
    const t = await streamOnce(client, short, 2);
    idleTtft.push(t.first - t.start);
    const streams = Array.from({ length: 8 }, (_, i) =>
      streamOnce(client, [{ role: 'user', content: `Load ${r}-${i}: ${filler(500 + r * 10 + i, 12)}` }], MAX_TOKENS * 2),
    );
    await new Promise((res) => setTimeout(res, 1000)); // the 8 are prefilled and decoding
    const u = await streamOnce(client, short, 2);
    loadedTtft.push(u.first - u.start);
    await Promise.all(streams);
  }
  const fairness = { idle_ms: round(median(idleTtft)), under_8_streams_ms: round(median(loadedTtft)), ratio: round(median(loadedTtft) / median(idleTtft)) };
  log(`short request TTFT: idle ${fairness.idle_ms} ms, while 8 streams decode ${fairness.under_8_streams_ms} ms`);

  // Long contexts: one stream's decode rate after a 1,800-token prompt (or a little more) against
  // a ~50-token one (the filler's words are ~3.3 tokens each with this tokenizer).
  const decodeAfter = async (words: number) => {
    const rates: number[] = [];
    let prompt = 0;
    for (let r = 0; r < REPEATS; r++) {
      const t = await streamOnce(client, [{ role: 'user', content: filler(9000 + words + r, words) }], MAX_TOKENS);
      rates.push((t.tokens - 1) / ((t.end - t.first) / 1000));
      prompt = t.promptTokens;
    }
    return { rate: median(rates), prompt };
  };
  const shortCtx = await decodeAfter(12);
  const longCtx = await decodeAfter(560);
  const longContext = {
    short_prompt_tokens: shortCtx.prompt, short_prompt_tokens_per_s: round(shortCtx.rate),
    long_prompt_tokens: longCtx.prompt, long_prompt_tokens_per_s: round(longCtx.rate), ratio: round(longCtx.rate / shortCtx.rate),
  };
  log(`decode after a ${shortCtx.prompt}-token prompt ${longContext.short_prompt_tokens_per_s} tok/s, after a ${longCtx.prompt}-token one ${longContext.long_prompt_tokens_per_s} tok/s`);

  // TTFT with a ~1000-token prompt: a new prefix each time (cold), then the same
  // prefix with a new last message (warm: the prefix cache holds it).
  const cold: number[] = [];
  const warm: number[] = [];
  let promptTokens = 0;
  let cachedTokens = 0;
  for (let r = 0; r < REPEATS; r++) {
    const system = { role: 'system' as const, content: filler(1000 + r, 280) };
    const a = await streamOnce(client, [system, { role: 'user', content: 'First question?' }], 2);
    const b = await streamOnce(client, [system, { role: 'user', content: 'A different question?' }], 2);
    cold.push(a.first - a.start);
    warm.push(b.first - b.start);
    promptTokens = b.promptTokens;
    cachedTokens = b.cached;
  }
  log(`TTFT cold ${round(median(cold))} ms, warm ${round(median(warm))} ms (${cachedTokens}/${promptTokens} cached)`);

  // HTTP + SSE against a direct call of an engine of its own, one request at a time,
  // alternated request by request (and which goes first), so that whatever else loads
  // the machine hits both alike; the figure is the median of the pairs' ratios.
  const messages = [{ role: 'user' as const, content: 'Overhead probe: tell me something.' }];
  const direct = await directEngine();
  const viaHttp = async () => {
    const t = await streamOnce(client, messages, MAX_TOKENS);
    return t.end - t.start;
  };
  await viaHttp();
  await direct.one(messages); // warm-ups
  const http: number[] = [];
  const directTimes: number[] = [];
  for (let i = 0; i < 3 * REPEATS; i++) {
    if (i % 2) http.push(await viaHttp());
    directTimes.push(await direct.one(messages));
    if (i % 2 === 0) http.push(await viaHttp());
  }
  const pairedOverhead = median(http.map((h, i) => h / directTimes[i] - 1));
  await server.close();
  const direct8 = await direct.concurrent8();
  await direct.close();
  log(`request of ${MAX_TOKENS} tokens: HTTP ${round(median(http))} ms, direct ${round(median(directTimes))} ms, paired overhead ${round(pairedOverhead * 100, 1)}%`);

  const forms = await formsEngineAlone(messages);

  // What onnxruntime allows for this model here, whatever the engine: the graph at batch 1 and 8,
  // its weight matmuls alone at batch 8, and decode steps at the contexts just measured (their
  // mean cached length while decoding).
  const ceilings = await measureCeilings(join(FIXTURES_DIR, 'bench-chat', 'onnx', 'model.onnx'), shortCtx.prompt + MAX_TOKENS / 2, longCtx.prompt + MAX_TOKENS / 2);
  log(`ceilings: ${JSON.stringify(ceilings)}`);

  const prompts = Array.from({ length: 8 }, (_, i) => `Request ${i}: ${filler(i, 12)}`);
  const baseline = await baselineTransformersJs(prompts);
  log(`transformers.js pipeline, one prompt after another: ${round(baseline)} tok/s`);

  // Structured outputs: masking per decode step against the step itself, at batch 1 and 8,
  // for the bench model's vocabulary and for a real one (Qwen3's, 151,936 logits).
  const stepMs = { 1: 1000 / tput[1].perStreamDecode, 8: 1000 / tput[8].perStreamDecode };
  const benchVocab = (JSON.parse(readFileSync(join(FIXTURES_DIR, 'bench-chat', 'config.json'), 'utf8')) as { vocab_size: number }).vocab_size;
  const masks = [
    await maskingCost(join(FIXTURES_DIR, 'bench-chat', 'tokenizer.json'), benchVocab),
    await maskingCost(qwen3Tokenizer(), 151_936),
  ];
  const grammarMask = masks.map((m) => ({
    vocab: m.vocab,
    ms_per_step: { 1: round(m.ms_per_step[1]!, 3), 8: round(m.ms_per_step[8]!, 3) },
    fraction_of_bench_step: { 1: round(m.ms_per_step[1]! / stepMs[1], 3), 8: round(m.ms_per_step[8]! / stepMs[8], 3) },
  }));
  log(`grammar masking per step: ${grammarMask.map((g) => `vocab ${g.vocab}: ${g.ms_per_step[1]} ms (batch 1), ${g.ms_per_step[8]} ms (batch 8)`).join('; ')}`);

  // The peer: llama.cpp on GGUF files of the same weights (F32, F16, Q8_0, Q4_0; 1 and 2 threads),
  // after the 1,800-ish-token prompt the forms were measured after; Hearth ÷ llama.cpp per form.
  const llamaCpp = await measureLlamaCpp({ maxTokens: MAX_TOKENS, repeats: REPEATS, longPrompt: forms.fp32?.long_prompt_tokens, log });
  const vsLlamaCpp = hearthVsLlamaCpp(forms, llamaCpp);

  // A real vocabulary (issue 30 §4): the Qwen-shaped q4f16 (151,936 tokens; BENCH_REAL_VOCAB=full,
  // the 0.5B shapes, by default; mid or small for a twin with fewer or smaller layers; off to skip),
  // with its step loop per row, its graph alone at each batch and llama.cpp's Q4_0 of its weights.
  const realVocabSize = process.env.BENCH_REAL_VOCAB ?? 'full';
  const realVocab = realVocabSize === 'off' ? undefined : await measureRealVocab({ size: realVocabSize as QwenShapedSize, maxTokens: MAX_TOKENS, repeats: REPEATS, log });

  // Speculative decoding by prompt lookup (issue 35): the copying fixture and two that never copy, on and off, at 1 and 8 streams.
  const speculative = await measureSpeculative({ streams: [1, 8], repeats: REPEATS, maxTokens: MAX_TOKENS, log });

  // Speech to text (issue 46): real-time factor at 1 and 8 files at once against transformers.js's pipeline.
  const speech = await measureSpeech({ repeats: REPEATS, log });

  const bandwidth = copyBandwidth();
  const bound = bandwidth / weightBytes;
  const batch1 = tput[1].perStreamDecode;

  Object.assign(results, {
    machine: { cpu: cpus()[0]?.model, cores: cpus().length, memory_gib: round(totalmem() / 2 ** 30, 1), node: process.version },
    date: new Date().toISOString(),
    model: { id: MODEL, weight_bytes: weightBytes },
    settings: { max_tokens: MAX_TOKENS, repeats: REPEATS, concurrency: CONCURRENCY },
    throughput_tokens_per_s: Object.fromEntries(CONCURRENCY.map((c) => [c, tput[c].tokensPerSecond])),
    step_breakdown_ms: breakdown,
    short_request_ttft: fairness,
    long_context_decode: longContext,
    ceilings: {
      ...ceilings,
      // Tokens a second at 8 streams if a step were only its graph run, and that against the baseline.
      concurrency8_max_tokens_per_s: round(8000 / ceilings.graph_batch8_ms),
      concurrency8_max_vs_baseline: round(8000 / ceilings.graph_batch8_ms / baseline),
      // The long-context rate if a step were only its graph run, against the short-context rate measured above.
      long_context_max_ratio: round(1000 / ceilings.graph_long_context_ms / shortCtx.rate),
    },
    baseline_transformers_js_tokens_per_s: round(baseline),
    concurrency8_vs_baseline: round(tput[8].tokensPerSecond / baseline),
    direct_engine_concurrency8_tokens_per_s: round(direct8),
    direct_engine_concurrency8_vs_baseline: round(direct8 / baseline),
    forms_engine_alone: forms,
    peers: { llama_cpp: llamaCpp },
    vs_llama_cpp: vsLlamaCpp,
    ...(realVocab ? { real_vocab: realVocab } : {}),
    speculative,
    speech,
    ttft_ms: { prompt_tokens: promptTokens, cached_tokens: cachedTokens, cold: round(median(cold)), warm: round(median(warm)), warm_over_cold: round(median(warm) / median(cold), 3) },
    http_overhead: { http_ms: round(median(http)), direct_ms: round(median(directTimes)), overhead: round(pairedOverhead, 4), pairs: http.length },
    grammar_mask: { step_ms: { 1: round(stepMs[1]), 8: round(stepMs[8]) }, vocabularies: grammarMask },
    batch1_decode: { tokens_per_s: batch1, copy_bandwidth_gb_s: round(bandwidth / 1e9), bound_tokens_per_s: round(bound), fraction_of_bound: round(batch1 / bound, 3) },
    targets: {
      'concurrency 8 >= 6x baseline': tput[8].tokensPerSecond / baseline >= 6,
      'concurrency 16 at least as fast as 8': tput[16].tokensPerSecond >= tput[8].tokensPerSecond,
      'short request TTFT under 8 streams <= 3x idle': fairness.ratio <= 3,
      'decode after 1,800 prompt tokens >= 0.6x after 50': longContext.ratio >= 0.6,
      'warm TTFT <= 0.2x cold': median(warm) / median(cold) <= 0.2,
      'HTTP overhead <= 5%': pairedOverhead <= 0.05,
      'batch-1 decode >= 50% of bound': batch1 / bound >= 0.5,
      // Issue 19 §4: against what onnxruntime allows for the graph, plain and fused (engine alone for the forms).
      '8 streams >= 85% of the 8-stream ceiling (plain, over HTTP)': tput[8].tokensPerSecond >= 0.85 * (8000 / ceilings.graph_batch8_ms),
      ...Object.fromEntries(
        (['fp32', 'genai fp32', 'genai q4'] as const).filter((f) => forms[f]).map((f) => [`8 streams >= 85% of the 8-stream ceiling (${f}, engine alone)`, forms[f]!.concurrency8_tokens_per_s >= 0.85 * forms[f]!.ceiling.concurrency8_max_tokens_per_s]),
      ),
      'decode after 1,800 prompt tokens >= 90% of its ceiling (plain)': longContext.ratio >= 0.9 * (1000 / ceilings.graph_long_context_ms / shortCtx.rate),
      // The same two, with each form's graph timed between the engine's own rounds (forms_engine_alone.*.interleaved).
      ...Object.fromEntries(
        (['fp32', 'genai fp32', 'genai q4'] as const).filter((f) => forms[f]).flatMap((f) => [
          [`8 streams >= 85% of the 8-stream ceiling (${f}, engine alone, graph timed between rounds)`, forms[f]!.interleaved.concurrency8_vs_graph >= 0.85],
          [`decode after 1,800 prompt tokens >= 90% of its ceiling (${f}, engine alone, graph timed between rounds)`, forms[f]!.interleaved.long_context_decode_vs_graph >= 0.9],
        ]),
      ),
      'grammar masking < 10% of a bench-model step (batch 1 and 8)': grammarMask[0]!.fraction_of_bench_step[1] < 0.1 && grammarMask[0]!.fraction_of_bench_step[8] < 0.1,
      // Issue 30: on a real vocabulary (real_vocab), per-row host time and q4 against llama.cpp's Q4_0 (null: a figure is missing).
      ...realVocab?.targets,
      // Issue 35: speculative decoding's targets (speculative.ts).
      ...speculative.targets,
      // Issue 46: speech to text's (speech.ts).
      ...speech.targets,
    },
  });
  writeFileSync(join(BENCH, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);

  const chart = stack([
    barChart(`Decode throughput, ${MODEL} (${(weightBytes / 1e6).toFixed(0)} MB fp32), ${cpus().length} cores`, 'tok/s', [
      { label: 'transformers.js, sequential', value: baseline, color: '#888' },
      ...CONCURRENCY.map((c) => ({ label: `Hearth, ${c} concurrent`, value: tput[c].tokensPerSecond })),
      { label: 'engine alone, 8 concurrent', value: direct8, note: 'no HTTP', color: '#e8a37f' },
      { label: 'graph alone, 8 concurrent', value: 8000 / ceilings.graph_batch8_ms, note: 'ceiling: no engine', color: '#4a7bd0' },
      { label: 'batch-1 bandwidth bound', value: bound, color: '#4a7bd0' },
    ]),
    barChart(`Time to first token, ${promptTokens}-token prompt`, 'ms', [
      { label: 'cold', value: median(cold), color: '#888' },
      { label: 'warm prefix', value: median(warm), note: `${cachedTokens} tokens cached` },
    ]),
    barChart('A decode step at 8 concurrent streams, by phase', 'ms', [
      ...Object.entries(breakdown[8].phases_ms).filter(([, ms]) => ms >= 0.005).map(([phase, ms]) => ({ label: phase, value: ms })),
      { label: 'outside the loop', value: Math.max(0, breakdown[8].client_step_ms - breakdown[8].loop_ms), note: 'main thread, messages', color: '#888' },
    ]),
    ...(realVocab
      ? [
          barChart(`Real vocabulary: ${realVocab.model.fixture}, q4 (${(realVocab.model.file_bytes / 1e6).toFixed(0)} MB), against llama.cpp Q4_0`, 'tok/s', [
            ...realVocab.settings.streams.flatMap((c) => [
              { label: `Hearth, ${c} stream${c > 1 ? 's' : ''}`, value: realVocab.hearth[c]!.aggregate_tokens_per_s },
              { label: `llama.cpp, ${c === 1 ? 'one request' : `${c} in lockstep`}`, value: (c === 1 ? realVocab.llama_cpp.forms.Q4_0?.best.batch1_tokens_per_s : realVocab.llama_cpp.forms.Q4_0?.best.concurrent_tokens_per_s[c]) ?? 0, color: '#888' },
              { label: `graph alone, batch ${c}`, value: realVocab.graph_alone[c]!.tokens_per_s, note: 'ceiling: no engine', color: '#4a7bd0' },
            ]),
          ]),
        ]
      : []),
    barChart('Time to first token of a short request', 'ms', [
      { label: 'idle server', value: fairness.idle_ms, color: '#888' },
      { label: 'while 8 streams decode', value: fairness.under_8_streams_ms },
    ]),
  ]);
  writeFileSync(join(BENCH, 'chart.svg'), chart);
  log(`wrote bench/results.json and bench/chart.svg`);
  console.log(JSON.stringify(results, null, 2));
  console.log(`\n${llamaCppTable(llamaCpp, vsLlamaCpp)}`);
  if (realVocab) console.log(`\n${realVocabTable(realVocab)}`);
  console.log(`\n${speculativeTable(speculative)}`);
}

await main();
