// npm run bench:device [-- --quick] [--out FILE] [--budget SECONDS] [--sections a,b,…] [--tokens N] [--rounds N]
// The GPU bench (DESIGN.md "GPU-class speed", issue 19 §3), one run, written to
// bench/results-gpu.json:
// - the bench model in plain form (bench-chat) and in onnxruntime-genai's builder's fused form
//   (bench-chat-genai), fp32, at 1, 8 and 16 streams, on WebGPU with the KV cache on the
//   device, on WebGPU with it forced through the host, and on the same machine's CPU;
// - a model of realistic size (random weights with Qwen2.5-0.5B's shapes, the builder's fused
//   q4f16, models/exports/qwen-shaped.ts), written here at run time, on Hearth (the same three
//   ways) and on transformers.js (the same file and device, sequential requests);
// - for the 0.5B-shaped model also (issue 30 §4): the step loop's time per row in each Hearth
//   section (host time a row: all but the graph's runs); the graph's own rate at 1, 8 and 16 rows
//   (bench/graph-rate.ts: decode steps at a short context, the cache fed back as device buffers,
//   the logits read to the host), on WebGPU and on the CPU; and, where `python3 -c "import torch"`
//   works (HEARTH_BENCH_PYTHON names another interpreter), a PyTorch peer at 1, 8 and 16 streams
//   (bench/pytorch-peer.py: fp16, eager, Qwen2 of the same shapes, random weights); and Hearth on
//   WebGPU again with every row read whole (sampleFrom 'whole-rows': per-row host time before the
//   sampling head);
// - the targets: Hearth's batch-1 decode ≥ transformers.js's, 8 streams ≥ 5× transformers.js's
//   sequential rate, WebGPU faster than the CPU on the 0.5B-shaped model; and issue 30's: one
//   stream's decode, 8 and 16 streams each ≥ 85% of the graph's own rate at that batch, time to
//   first token at 8 streams ≤ 2.5× one stream's (idle), host time ≤ 0.1 ms a row.
// The engine alone (no worker, no HTTP), prefix cache off. Each section runs in a child process
// of its own with a time limit, so that a native abort, a hang or a missing WebGPU adapter costs
// that section only (its error string is recorded) and the file is always written; it is
// rewritten after every section. `--quick` shrinks everything (a few tokens, one round, the
// 0.5B model's small twin) for smoke runs without a GPU (docs/gpu.md, "Running the GPU bench").
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    out: { type: 'string' },
    budget: { type: 'string' },
    tokens: { type: 'string' },
    rounds: { type: 'string' },
    sections: { type: 'string' },
    child: { type: 'string' },
    spec: { type: 'string' },
    result: { type: 'string' },
  },
});

const QUICK = args.quick;
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const log = (s: string) => console.log(`[bench:device] ${s}`);
const words = ['the', 'river', 'stone', 'light', 'quiet', 'market', 'winter', 'garden', 'table', 'window', 'signal', 'paper'];
const filler = (seed: number, n: number) => Array.from({ length: n }, (_, i) => words[(seed * 7 + i * 3) % words.length]).join(' ');
const promptOf = (id: number, promptWords: number) => [{ role: 'user', content: `${id}: ${filler(id, promptWords)}` }];

/** Token counts and rounds: sized so that the whole run stays near 6 minutes on a 16-core H100/H200 machine. */
const SETTINGS = QUICK
  ? {
      // SwiftShader compiles a shader for each new shape (minutes for the plain bench model at 8
      // streams): the bench model's smoke run stops at 4 streams.
      bench_model: { new_tokens: 2, rounds: 1, streams: [1, 2, 4], prompt_words: 2, round_cap_s: 60 },
      qwen: { new_tokens: 3, rounds: 1, streams: [1, 8, 16], prompt_words: 2, round_cap_s: 60 },
      transformers_js: { new_tokens: 3, requests: 1, prompt_words: 2 },
      graph_rate: { steps: 3, batches: [1, 8, 16] },
      pytorch: { new_tokens: 3, rounds: 1, streams: [1, 8, 16] },
      budget_s: 1500,
    }
  : {
      bench_model: { new_tokens: 32, rounds: 3, streams: [1, 8, 16], prompt_words: 12, round_cap_s: 8 },
      qwen: { new_tokens: 64, rounds: 3, streams: [1, 8, 16], prompt_words: 12, round_cap_s: 12 },
      transformers_js: { new_tokens: 64, requests: 3, prompt_words: 12 },
      graph_rate: { steps: 64, batches: [1, 8, 16] },
      pytorch: { new_tokens: 64, rounds: 3, streams: [1, 8, 16] },
      budget_s: 480,
    };
// --tokens / --rounds override every section's (for trying a single section by hand).
for (const s of [SETTINGS.bench_model, SETTINGS.qwen, SETTINGS.transformers_js, SETTINGS.pytorch] as { new_tokens: number; rounds?: number; requests?: number }[]) {
  if (args.tokens) s.new_tokens = Number(args.tokens);
  if (args.rounds && s.rounds !== undefined) s.rounds = Number(args.rounds);
  if (args.rounds && s.requests !== undefined) s.requests = Number(args.rounds);
}

// ---------------------------------------------------------------- sections (each in a child) --

type Target = 'webgpu_kv_device' | 'webgpu_kv_host' | 'cpu';
interface HearthSpec {
  kind: 'hearth';
  folder: string;
  dtype: string;
  target: Target;
  streams: number[];
  new_tokens: number;
  rounds: number;
  prompt_words: number;
  round_cap_s: number;
  /** The engine's sampleFrom: 'whole-rows' reads every row whole (the path before the sampling head). */
  sample_from?: 'candidates' | 'whole-rows';
  /** Speculative decoding (default off: the other sections are read against the graph alone, step for step). */
  speculative?: 'off' | 'ngram';
}
interface TransformersSpec {
  kind: 'transformers_js';
  folder: string;
  dtype: string;
  device: 'webgpu' | 'cpu';
  new_tokens: number;
  requests: number;
  prompt_words: number;
}
interface WriteSpec {
  kind: 'write';
  what: 'bench' | 'qwen';
  small: boolean;
}
/** The graph alone: decode steps at each batch (graph-rate.ts). */
interface GraphRateSpec {
  kind: 'graph_rate';
  file: string;
  device: 'webgpu' | 'cpu';
  batches: number[];
  prompt_tokens: number;
  steps: number;
}
/** The PyTorch peer (pytorch-peer.py) on the Qwen-shaped model's dimensions. */
interface PytorchSpec {
  kind: 'pytorch';
  python: string;
  device?: string;
  dtype?: string;
  dims: Record<string, number>;
  vocab: number;
  streams: number[];
  new_tokens: number;
  prompt_tokens: number;
  rounds: number;
}
/** The sampling head's forms after a decode step (head-rate.ts). */
interface HeadRateSpec {
  kind: 'head_rate';
  file: string;
  device: 'webgpu' | 'cpu';
  batches: number[];
  prompt_tokens: number;
  steps: number;
}
type ChildSpec = HearthSpec | TransformersSpec | WriteSpec | GraphRateSpec | HeadRateSpec | PytorchSpec;

/** One engine on one device: for each stream count, `rounds` rounds of that many requests at once. */
async function hearthSection(s: HearthSpec, partial: (figures: object) => void): Promise<object> {
  const { nodeBackend } = await import('../src/backends/node.js');
  const { createEngine } = await import('../src/engine/engine.js');
  const { modelsSettled } = await import('../src/runtime.js');
  const { perRow } = await import('./step-breakdown.js');
  const { countGcPauses, gcPerRow } = await import('./gc-pauses.js');
  const device = s.target === 'cpu' ? 'cpu' : 'webgpu';
  const engine = createEngine(nodeBackend(device, { kvOnDevice: s.target !== 'webgpu_kv_host' }), { kvCacheMb: 0, speculative: s.speculative ?? 'off', ...(s.sample_from ? { sampleFrom: s.sample_from } : {}) });
  const model = 'bench/model';
  const t0 = performance.now();
  await engine.load([{
    id: model, task: 'chat', class: 'bench', context_length: 4096, source: s.folder,
    dtype: { [device]: s.dtype }, price: { input_per_1m: 0, output_per_1m: 0 },
  }]);
  await modelsSettled(engine);
  const [state] = await engine.models();
  if (state!.status !== 'ready') throw new Error(`did not load on ${device}: ${state!.detail}`);
  const loadMs = performance.now() - t0;
  let n = 0;
  const once = async (concurrency: number, maxTokens: number) => {
    const sampling = {
      max_tokens: maxTokens, temperature: 0, top_p: 1, top_k: -1, min_p: 0, presence_penalty: 0,
      frequency_penalty: 0, stop: [], stop_token_ids: [], ignore_eos: true, logprobs: -1,
    };
    const t = performance.now();
    const runs = await Promise.all(
      Array.from({ length: concurrency }, () => {
        const id = n++;
        const start = performance.now();
        let first = 0;
        return engine
          .generate({ id: `b${id}`, model, prompt: { messages: promptOf(id, s.prompt_words) }, sampling }, () => void (first ||= performance.now()))
          .then((r) => ({ start, first, end: performance.now(), tokens: r.completion_tokens, prompt: r.prompt_tokens }));
      }),
    );
    const wall = (performance.now() - t) / 1000;
    const tokens = runs.reduce((k, r) => k + r.tokens, 0);
    return {
      aggregate: tokens / wall,
      decode: median(runs.map((r) => (r.tokens - 1) / ((r.end - r.first) / 1000))),
      ttft: median(runs.map((r) => r.first - r.start)),
      tokens: runs.map((r) => r.tokens),
      prompt: runs[0]!.prompt,
    };
  };
  if (!QUICK) await once(1, 4); // warm-up: shaders, pools
  const figures: Record<string, unknown> = { load_ms: round(loadMs) };
  const loop = async () => (await engine.stats!()).models[0]!;
  for (const streams of s.streams) {
    const rounds = [];
    const before = await loop();
    const pauses = countGcPauses();
    const started = performance.now();
    // At least one round; more while this stream count has spent less than its cap.
    while (rounds.length < s.rounds && (rounds.length === 0 || performance.now() - started < s.round_cap_s * 1000)) {
      rounds.push(await once(streams, s.new_tokens));
    }
    const gc = await pauses.stop();
    const breakdown = perRow(before, await loop(), streams * rounds.length);
    const f = {
      aggregate_tokens_per_s: round(median(rounds.map((r) => r.aggregate))),
      per_stream_decode_tokens_per_s: round(median(rounds.map((r) => r.decode))),
      ttft_ms: round(median(rounds.map((r) => r.ttft))),
      rounds: rounds.length,
      spread_aggregate: [round(Math.min(...rounds.map((r) => r.aggregate))), round(Math.max(...rounds.map((r) => r.aggregate)))],
      prompt_tokens: rounds[0]!.prompt,
      new_tokens_per_request: Math.min(...rounds.flatMap((r) => r.tokens)),
      // The step loop per row sampled (decode rows and first tokens): host time a row is all but the graph's runs.
      step_breakdown: breakdown,
      // V8's GC pauses over the rounds, in whatever phase they fell (bench/gc-pauses.ts).
      gc: gcPerRow(gc, breakdown.rows),
    };
    figures[`streams_${streams}`] = f;
    partial(figures); // what a timeout leaves
    log(`  ${streams} stream(s): ${f.aggregate_tokens_per_s} tok/s aggregate, ${f.per_stream_decode_tokens_per_s} tok/s decode per stream, TTFT ${f.ttft_ms} ms (${f.rounds} round(s)); host ${f.step_breakdown.host_ms_per_row} ms a row (${f.step_breakdown.host_ms_per_row_without_head} without the sampling head's run; V8 GC ${f.gc.ms_per_row} ms a row), ${JSON.stringify(f.step_breakdown.phases_ms_per_row)}`);
  }
  const stats = (await engine.stats?.())?.models[0];
  figures.engine = {
    kv_device_reads: stats?.kv_device_reads, decode_steps: stats?.decode_steps, decode_rows: stats?.decode_rows, step_ms: stats?.step_ms,
    spec_drafted_tokens: stats?.spec_drafted_tokens, spec_accepted_tokens: stats?.spec_accepted_tokens,
  };
  await engine.dispose();
  return figures;
}

/** transformers.js on the same file and device: `requests` requests one after another (it has no batching of its own). */
async function transformersSection(s: TransformersSpec): Promise<object> {
  const { AutoModelForCausalLM, AutoTokenizer, Tensor, env } = await import('@huggingface/transformers');
  env.localModelPath = `${dirname(s.folder)}/`;
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  const name = s.folder.split('/').pop()!;
  const t0 = performance.now();
  const tok = await AutoTokenizer.from_pretrained(name, { local_files_only: true });
  const lm = await AutoModelForCausalLM.from_pretrained(name, { dtype: s.dtype as never, device: s.device, local_files_only: true });
  const loadMs = performance.now() - t0;
  const generate = async (id: number, maxNew: number) => {
    const ids = (tok.apply_chat_template(promptOf(id, s.prompt_words) as never, { add_generation_prompt: true, return_dict: false, return_tensor: false }) as number[]).map(Number);
    const times: number[] = [];
    // put() gets the prompt first, then each new token.
    const streamer = { put: () => void times.push(performance.now()), end: () => undefined };
    const start = performance.now();
    const out = (await lm.generate({
      input_ids: new Tensor('int64', BigInt64Array.from(ids, BigInt), [1, ids.length]),
      attention_mask: new Tensor('int64', new BigInt64Array(ids.length).fill(1n), [1, ids.length]),
      max_new_tokens: maxNew, min_new_tokens: maxNew, do_sample: false, streamer,
    } as never)) as { dims: number[] };
    const end = performance.now();
    const tokens = out.dims[1]! - ids.length;
    const first = times[1] ?? end;
    return { tokens, seconds: (end - start) / 1000, decode: (tokens - 1) / ((end - first) / 1000), ttft: first - start, prompt: ids.length };
  };
  if (!QUICK) await generate(100_000, 4); // warm-up
  const runs = [];
  const t = performance.now();
  for (let i = 0; i < s.requests; i++) runs.push(await generate(i, s.new_tokens));
  const wall = (performance.now() - t) / 1000;
  await lm.dispose();
  const f = {
    load_ms: round(loadMs),
    sequential_tokens_per_s: round(runs.reduce((k, r) => k + r.tokens, 0) / wall),
    decode_tokens_per_s: round(median(runs.map((r) => r.decode))),
    ttft_ms: round(median(runs.map((r) => r.ttft))),
    requests: runs.length,
    prompt_tokens: runs[0]!.prompt,
    new_tokens_per_request: Math.min(...runs.map((r) => r.tokens)),
  };
  log(`  sequential ${f.sequential_tokens_per_s} tok/s, decode ${f.decode_tokens_per_s} tok/s, TTFT ${f.ttft_ms} ms`);
  return f;
}

/** The graph's own decode rate at each batch, on the section's device. */
async function graphRateSection(s: GraphRateSpec): Promise<object> {
  const { graphDecodeRates } = await import('./graph-rate.js');
  const rates = await graphDecodeRates(s.file, { device: s.device, batches: s.batches, promptTokens: s.prompt_tokens, steps: s.steps });
  for (const r of Object.values(rates)) log(`  batch ${r.batch}: ${r.step_ms} ms a step, ${r.tokens_per_s} tok/s`);
  return Object.fromEntries(Object.values(rates).map((r) => [`batch_${r.batch}`, r]));
}

/** Each form of the sampling head after a decode step, on the section's device. */
async function headRateSection(s: HeadRateSpec): Promise<object> {
  const { headRates } = await import('./head-rate.js');
  const rates = await headRates(s.file, { device: s.device, batches: s.batches, promptTokens: s.prompt_tokens, steps: s.steps });
  for (const [form, byBatch] of Object.entries(rates)) {
    log(`  ${form}: ${Object.values(byBatch).map((r) => `batch ${r.batch} step+head ${r.step_and_head_ms} ms (head alone ${r.head_alone_ms} ms)`).join('; ')}`);
  }
  return Object.fromEntries(Object.entries(rates).map(([form, byBatch]) => [form, Object.fromEntries(Object.values(byBatch).map((r) => [`batch_${r.batch}`, r]))]));
}

/** The PyTorch peer: pytorch-peer.py's JSON (its last line of output). */
async function pytorchSection(s: PytorchSpec): Promise<object> {
  const d = s.dims;
  const argv = [
    join(import.meta.dirname, 'pytorch-peer.py'),
    '--hidden', d.hidden, '--layers', d.layers, '--heads', d.heads, '--kv-heads', d.kvHeads, '--head-dim', d.headDim,
    '--intermediate', d.intermediate, '--vocab', s.vocab, '--streams', s.streams.join(','), '--new-tokens', s.new_tokens,
    '--prompt-tokens', s.prompt_tokens, '--rounds', s.rounds, ...(s.device ? ['--device', s.device] : []), ...(s.dtype ? ['--dtype', s.dtype] : []),
  ].map(String);
  const out = execFileSync(s.python, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 16 << 20 });
  const result = JSON.parse(out.trim().split('\n').at(-1)!) as { engine: string; streams: Record<string, { aggregate_tokens_per_s: number; ttft_ms: number }> };
  log(`  ${result.engine}: ${Object.entries(result.streams).map(([c, f]) => `${c} stream(s) ${f.aggregate_tokens_per_s} tok/s, TTFT ${f.ttft_ms} ms`).join('; ')}`);
  // streams_N keys, as the Hearth sections have them.
  const { streams, ...rest } = result;
  return { ...rest, ...Object.fromEntries(Object.entries(streams).map(([c, f]) => [`streams_${c}`, f])) };
}

async function writeSection(s: WriteSpec): Promise<object> {
  const { FIXTURES_DIR } = await import('../models/index.js');
  const t0 = performance.now();
  if (s.what === 'bench') {
    const { FIXTURE_BUILDERS, writeFixtureFolder } = await import('../models/fixtures.js');
    const written = [];
    for (const name of ['bench-chat', 'bench-chat-genai']) {
      if (existsSync(join(FIXTURES_DIR, name))) continue;
      writeFixtureFolder(FIXTURES_DIR, name, FIXTURE_BUILDERS[name]!(), false);
      written.push(name);
    }
    return { written, seconds: round((performance.now() - t0) / 1000) };
  }
  const { writeQwenShaped, qwenShapedSpec } = await import('../models/exports/qwen-shaped.js');
  const folder = writeQwenShaped(FIXTURES_DIR, s.small);
  const spec = qwenShapedSpec(s.small);
  return {
    folder,
    form: "onnxruntime-genai builder's fused q4f16 (GroupQueryAttention, MatMulNBits block 32 accuracy_level 4, GatherBlockQuantized tied embeddings, float16 activations and KV)",
    dims: { ...spec.dims, vocab: spec.vocabSize, tied_embeddings: true },
    file: 'onnx/model_q4f16.onnx',
    file_bytes: statSync(join(folder, 'onnx', 'model_q4f16.onnx')).size,
    seconds: round((performance.now() - t0) / 1000),
  };
}

if (args.child) {
  const spec = JSON.parse(args.spec!) as ChildSpec;
  const partial = (figures: object) => writeFileSync(args.result!, JSON.stringify({ ...figures, partial: true }));
  const result =
    spec.kind === 'hearth' ? await hearthSection(spec, partial)
    : spec.kind === 'transformers_js' ? await transformersSection(spec)
    : spec.kind === 'graph_rate' ? await graphRateSection(spec)
    : spec.kind === 'head_rate' ? await headRateSection(spec)
    : spec.kind === 'pytorch' ? await pytorchSection(spec)
    : await writeSection(spec);
  writeFileSync(args.result!, JSON.stringify(result));
  process.exit(0);
}

// ------------------------------------------------------------------------------- the parent --

const started = performance.now();
const BUDGET_S = Number(args.budget ?? SETTINGS.budget_s);
const left = () => BUDGET_S - (performance.now() - started) / 1000;
const wanted = args.sections?.split(',');
const scratch = mkdtempSync(join(tmpdir(), 'hearth-bench-device-'));

/** Runs one section in a child process (this script again, with the same loader): its figures, or its error string. */
async function section(name: string, spec: ChildSpec, timeoutS: number): Promise<Record<string, unknown>> {
  const limit = Math.min(timeoutS, left() - 5);
  if (limit < 10) return { error: `skipped: the run's time budget (${BUDGET_S} s) was spent` };
  log(`${name} (up to ${Math.round(limit)} s)`);
  const resultFile = join(scratch, `${name.replaceAll(/\W/g, '_')}.json`);
  const t0 = performance.now();
  const childArgs = [...process.execArgv, process.argv[1]!, '--child', name, '--spec', JSON.stringify(spec), '--result', resultFile, ...(QUICK ? ['--quick'] : [])];
  const child = spawn(process.execPath, childArgs, { stdio: ['ignore', 'inherit', 'pipe'] });
  let tail = '';
  child.stderr.on('data', (d: Buffer) => {
    process.stderr.write(d);
    tail = (tail + d.toString()).slice(-4000);
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, limit * 1000);
  const [code, signal] = await new Promise<[number | null, string | null]>((res) => child.on('close', (c, s) => res([c, s])));
  clearTimeout(timer);
  const seconds = round((performance.now() - t0) / 1000);
  let figures: Record<string, unknown> | undefined;
  try {
    figures = JSON.parse(readFileSync(resultFile, 'utf8')) as Record<string, unknown>;
  } catch {
    // none written (or cut off mid-write by the kill)
  }
  if (code === 0 && figures) return { ...figures, section_s: seconds };
  const why = timedOut ? `timed out after ${Math.round(limit)} s` : signal ? `ended on ${signal}` : `exited with status ${code}`;
  const error = timedOut ? why : `${why}: ${errorLine(tail) ?? 'no error message'}`;
  log(`${name} failed: ${error}`);
  // The stream counts measured before it stopped stay (marked partial).
  return { ...figures, error, section_s: seconds };
}

/** The most telling line of a child's stderr: the thrown error's message, else its last line. */
function errorLine(stderr: string): string | undefined {
  const lines = stderr.split('\n').map((l) => l.trim()).filter(Boolean);
  const thrown = lines.findLast((l) => /^(\w*Error|Error)\b.*:/.test(l)) ?? lines.findLast((l) => /error|abort|fail/i.test(l));
  return (thrown ?? lines.at(-1))?.slice(0, 600);
}

function gpuName(): string | undefined {
  try {
    return execFileSync('nvidia-smi', ['--query-gpu=name,memory.total,driver_version', '--format=csv,noheader'], { encoding: 'utf8', timeout: 10_000 }).trim();
  } catch {
    return undefined;
  }
}

const { FIXTURES_DIR } = await import('../models/index.js');
const { webgpuAdapterProblem } = await import('../src/backends/node-webgpu-probe.js');
const { QWEN_SHAPED_FIXTURE, QWEN_SHAPED_SMALL_FIXTURE } = await import('../models/exports/qwen-shaped.js');

const results: Record<string, any> = {
  date: new Date().toISOString(),
  quick: QUICK,
  machine: {
    cpu: cpus()[0]?.model, cores: cpus().length, memory_gb: round(totalmem() / 2 ** 30), node: process.version,
    gpu: gpuName() ?? null, vk_icd_filenames: process.env.VK_ICD_FILENAMES ?? process.env.VK_DRIVER_FILES ?? null,
  },
  settings: {
    ...SETTINGS, budget_s: BUDGET_S,
    notes: 'Engine alone (no worker, no HTTP), prefix cache off, greedy, EOS ignored (the random models never emit it anyway). aggregate = all streams\' new tokens / wall time of the round (prefill included); per-stream decode = (new tokens - 1) / (last token - first token), median over streams; figures are medians over rounds (at least one; more while a stream count has spent less than round_cap_s). The 0.5B-shaped model runs at 1 and 8 streams on the CPU and with the KV through the host. transformers.js: one request after another, same file, prompt ids from its own chat template; its decode rate from its streamer\'s token times. Left out of Qwen2.5: the q/k/v biases; rope_theta 10000 (theirs 1e6) and a 4096-position rotary cache. step_breakdown (each Hearth section, each stream count): the step loop\'s ms per row sampled (decode rows and first tokens) by phase; host_ms_per_row = feeds + logits + repack + mask + sample + emit + yield (all but graph and prefill; prefix cache off), and without logits (the sampling head\'s run); gc: V8\'s GC pauses over the rounds, in whatever phase they fell (ms a row sampled, mark-compacts a hundred rows). graph_alone: the model file alone on the same provider, a batch of prompts as long as Hearth\'s prefilled once, then decode steps with the cache fed back (device buffers on WebGPU) and the logits read to the host; tokens_per_s = batch x 1000 / median step ms; gc_ms_per_row, its GC pauses a row. pytorch: bench/pytorch-peer.py, fp16 eager Qwen2 of the same dimensions (with q/k/v biases), random weights, one batch of that many prompts; aggregate includes prefill, TTFT from a one-token generate of the same batch.',
  },
  webgpu_adapter: null,
  bench_model: {},
  qwen2_5_0_5b_shaped: { hearth: {}, transformers_js: {}, graph_alone: {}, head_forms: {}, pytorch: {} },
  targets: {},
  sections: [] as object[],
};
const out = args.out ?? join(import.meta.dirname, QUICK ? 'results-gpu-quick.json' : 'results-gpu.json');
const save = () => writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);

const adapterProblem = await webgpuAdapterProblem(30_000);
results.webgpu_adapter = adapterProblem ?? 'found';
log(`WebGPU: ${adapterProblem ?? 'adapter found'}`);

async function record(where: Record<string, unknown>, key: string, name: string, spec: ChildSpec | { skipped: string }, timeoutS: number) {
  const webgpu =
    'kind' in spec &&
    ((spec.kind === 'hearth' && spec.target !== 'cpu') || (spec.kind === 'transformers_js' && spec.device === 'webgpu') || (spec.kind === 'graph_rate' && spec.device === 'webgpu'));
  // The models are written whatever --sections says (at once when they are there already).
  const r: Record<string, unknown> =
    wanted && !name.startsWith('write_') && !wanted.some((w) => name.startsWith(w))
      ? { skipped: 'not among --sections' }
      : !('kind' in spec)
        ? spec
        : webgpu && adapterProblem
          ? { error: adapterProblem }
          : await section(name, spec, timeoutS);
  where[key] = r;
  (results.sections as object[]).push({ name, ...('error' in r ? { error: r.error } : 'skipped' in r ? { skipped: r.skipped } : { ok: true }), seconds: r.section_s ?? 0 });
  save();
  return r;
}

// The fixtures: the bench model's two forms, and the 0.5B-shaped model (or its twin).
const qwenName = QUICK ? QWEN_SHAPED_SMALL_FIXTURE : QWEN_SHAPED_FIXTURE;
const qwenFolder = join(FIXTURES_DIR, qwenName);
const Q = results.qwen2_5_0_5b_shaped;
Q.fixture = qwenName;
Q.model = {};
await record(Q, 'model', 'write_qwen', { kind: 'write', what: 'qwen', small: QUICK }, QUICK ? 120 : 240);
const fixtures: Record<string, unknown> = {};
await record(fixtures, 'bench', 'write_bench', { kind: 'write', what: 'bench', small: QUICK }, 180);

const hearth = (folder: string, dtype: string, target: Target, s: typeof SETTINGS.bench_model, streams = s.streams): HearthSpec => ({
  kind: 'hearth', folder, dtype, target, streams, new_tokens: s.new_tokens, rounds: s.rounds, prompt_words: s.prompt_words, round_cap_s: s.round_cap_s,
});
const tjs = (device: 'webgpu' | 'cpu'): TransformersSpec => ({ kind: 'transformers_js', folder: qwenFolder, dtype: 'q4f16', device, ...SETTINGS.transformers_js });
/** The prompt length Hearth's 0.5B-shaped sections measured (the graph and PyTorch get prompts as long). */
const qwenPrompt = (): number => (Q.hearth.webgpu_kv_device?.streams_1?.prompt_tokens ?? Q.hearth.cpu?.streams_1?.prompt_tokens ?? 40) as number;
const graphRate = (device: 'webgpu' | 'cpu') => (): GraphRateSpec => ({
  kind: 'graph_rate', file: join(qwenFolder, 'onnx', 'model_q4f16.onnx'), device, batches: SETTINGS.graph_rate.batches, prompt_tokens: qwenPrompt(), steps: SETTINGS.graph_rate.steps,
});
const headRate = (device: 'webgpu' | 'cpu') => (): HeadRateSpec => ({
  kind: 'head_rate', file: join(qwenFolder, 'onnx', 'model_q4f16.onnx'), device, batches: SETTINGS.graph_rate.batches, prompt_tokens: qwenPrompt(), steps: Math.min(SETTINGS.graph_rate.steps, 24),
});
// The PyTorch peer where the machine has torch (and, but for --quick, CUDA: the peer is the GPU's).
const PYTHON = process.env.HEARTH_BENCH_PYTHON ?? 'python3';
function torchOnThisMachine(): { cuda: boolean } | { problem: string } {
  try {
    const out = execFileSync(PYTHON, ['-c', 'import torch; print(torch.cuda.is_available())'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
    return { cuda: out.trim().endsWith('True') };
  } catch (e) {
    const why = (e as { stderr?: string }).stderr?.trim().split('\n').at(-1) ?? String(e);
    return { problem: `${PYTHON} -c "import torch" failed: ${why}` };
  }
}
const pytorch = (): PytorchSpec | { skipped: string } => {
  const torch = torchOnThisMachine();
  if ('problem' in torch) return { skipped: torch.problem };
  if (!torch.cuda && !QUICK) return { skipped: 'torch sees no CUDA device (the peer is a GPU figure)' };
  const spec = (Q.model as { dims?: Record<string, number> & { vocab: number } }).dims;
  if (!spec) return { skipped: 'the model was not written' };
  const { vocab, ...dims } = spec;
  return {
    kind: 'pytorch', python: PYTHON, dims: dims as Record<string, number>, vocab, prompt_tokens: qwenPrompt(), ...SETTINGS.pytorch,
    // Without CUDA (--quick only): the CPU, in float32 (torch's CPU matmuls may lack float16).
    ...(torch.cuda ? {} : { device: 'cpu', dtype: 'float32' }),
  };
};

// Most wanted first, so that a run cut short by its budget still has the targets.
const q = SETTINGS.qwen;
const forms = {
  plain: { fixture: 'bench-chat', file: 'onnx/model.onnx', dtype: 'fp32' },
  fused: { fixture: 'bench-chat-genai', file: 'onnx/model.onnx', dtype: 'fp32' },
};
for (const [form, f] of Object.entries(forms)) results.bench_model[form] = { ...f };
const B = results.bench_model;
const bm = SETTINGS.bench_model;
const benchFolder = (form: keyof typeof forms) => join(FIXTURES_DIR, forms[form].fixture);
// A spec may be made when its turn comes (from figures of the sections before it).
const plan: [Record<string, unknown>, string, string, ChildSpec | (() => ChildSpec | { skipped: string }), number][] = [
  [Q.hearth, 'webgpu_kv_device', 'qwen_hearth_webgpu_kv_device', hearth(qwenFolder, 'q4f16', 'webgpu_kv_device', q), 150],
  [Q.graph_alone, 'webgpu', 'qwen_graph_webgpu', graphRate('webgpu'), 90],
  [Q.head_forms, 'webgpu', 'qwen_head_webgpu', headRate('webgpu'), 90],
  // Speculative decoding by prompt lookup at one stream (issue 35), beside the same section without it above.
  [Q.hearth, 'webgpu_kv_device_speculative', 'qwen_hearth_webgpu_speculative', { ...hearth(qwenFolder, 'q4f16', 'webgpu_kv_device', q, [1]), speculative: 'ngram' }, 90],
  [Q.pytorch, 'gpu', 'qwen_pytorch', pytorch, 180],
  [Q.transformers_js, 'webgpu', 'qwen_transformers_js_webgpu', tjs('webgpu'), 120],
  [Q.hearth, 'cpu', 'qwen_hearth_cpu', hearth(qwenFolder, 'q4f16', 'cpu', q, [1, 8]), 120],
  [Q.graph_alone, 'cpu', 'qwen_graph_cpu', graphRate('cpu'), 90],
  [Q.head_forms, 'cpu', 'qwen_head_cpu', headRate('cpu'), 90],
  // Per-row host time before the sampling head: every row read whole (sampleFrom 'whole-rows').
  [Q.hearth, 'webgpu_kv_device_whole_rows', 'qwen_hearth_webgpu_whole_rows', { ...hearth(qwenFolder, 'q4f16', 'webgpu_kv_device', { ...q, rounds: 1 }), sample_from: 'whole-rows' }, 120],
  [B.plain, 'webgpu_kv_device', 'bench_plain_webgpu_kv_device', hearth(benchFolder('plain'), 'fp32', 'webgpu_kv_device', bm), 90],
  [B.fused, 'webgpu_kv_device', 'bench_fused_webgpu_kv_device', hearth(benchFolder('fused'), 'fp32', 'webgpu_kv_device', bm), 90],
  [B.plain, 'webgpu_kv_host', 'bench_plain_webgpu_kv_host', hearth(benchFolder('plain'), 'fp32', 'webgpu_kv_host', bm), 90],
  [B.fused, 'webgpu_kv_host', 'bench_fused_webgpu_kv_host', hearth(benchFolder('fused'), 'fp32', 'webgpu_kv_host', bm), 90],
  [B.plain, 'cpu', 'bench_plain_cpu', hearth(benchFolder('plain'), 'fp32', 'cpu', bm), 60],
  [B.fused, 'cpu', 'bench_fused_cpu', hearth(benchFolder('fused'), 'fp32', 'cpu', bm), 60],
  [Q.hearth, 'webgpu_kv_host', 'qwen_hearth_webgpu_kv_host', hearth(qwenFolder, 'q4f16', 'webgpu_kv_host', q, [1, 8]), 90],
  [Q.transformers_js, 'cpu', 'qwen_transformers_js_cpu', tjs('cpu'), 90],
];
for (const [where, key, name, spec, timeoutS] of plan) {
  const written = (name.startsWith('qwen') ? Q.model : fixtures.bench) as { error?: string };
  if (written.error) {
    where[key] = { error: `not run: its model was not written (${written.error})` };
    (results.sections as object[]).push({ name, error: (where[key] as { error: string }).error, seconds: 0 });
    save();
    continue;
  }
  await record(where, key, name, typeof spec === 'function' ? spec() : spec, QUICK ? Math.max(timeoutS, 400) : timeoutS);
}
results.fixtures_written = fixtures.bench;

// ------------------------------------------------------------------------------- targets --

type Fig = Record<string, any> | undefined;
const rate = (f: Fig, streams: number, what: 'aggregate_tokens_per_s' | 'per_stream_decode_tokens_per_s'): number | undefined => f?.[`streams_${streams}`]?.[what];
function target(description: string, value: number | undefined, reference: number | undefined, factor: number, detail: object) {
  if (value === undefined || reference === undefined) return { description, met: null, why: 'a figure it needs is missing (see its section\'s error)', ...detail };
  return { description, ...detail, ratio: round(value / reference, 2), needed: factor, met: value >= factor * reference };
}
for (const device of ['webgpu', 'cpu'] as const) {
  const h = Q.hearth[device === 'webgpu' ? 'webgpu_kv_device' : 'cpu'] as Fig;
  const t = Q.transformers_js[device] as Fig;
  results.targets[`batch1_decode_vs_transformers_js_${device}`] = target(
    `Hearth's batch-1 decode at least transformers.js's, same file, ${device}`,
    rate(h, 1, 'per_stream_decode_tokens_per_s'), t?.decode_tokens_per_s, 1,
    { hearth_tokens_per_s: rate(h, 1, 'per_stream_decode_tokens_per_s'), transformers_js_tokens_per_s: t?.decode_tokens_per_s },
  );
  results.targets[`streams8_vs_5x_transformers_js_sequential_${device}`] = target(
    `Hearth at 8 streams at least 5x transformers.js's sequential rate, same file, ${device}`,
    rate(h, 8, 'aggregate_tokens_per_s'), t?.sequential_tokens_per_s, 5,
    { hearth_tokens_per_s: rate(h, 8, 'aggregate_tokens_per_s'), transformers_js_sequential_tokens_per_s: t?.sequential_tokens_per_s },
  );
}
for (const [streams, what] of [[1, 'per_stream_decode_tokens_per_s'], [8, 'aggregate_tokens_per_s']] as const) {
  const gpu = rate(Q.hearth.webgpu_kv_device, streams, what);
  const cpu = rate(Q.hearth.cpu, streams, what);
  results.targets[`qwen_webgpu_faster_than_cpu_streams_${streams}`] = target(
    `WebGPU faster than the CPU for the 0.5B-shaped model (Hearth, ${streams} stream${streams > 1 ? 's' : ''}, ${what})`,
    gpu, cpu, 1, { webgpu_tokens_per_s: gpu, cpu_tokens_per_s: cpu },
  );
}
// Issue 30 (DESIGN.md "Real-size models at GPU speed"): against the graph's own rate in this run.
function atMost(description: string, value: number | undefined, limit: number | undefined, detail: object) {
  if (value === undefined || limit === undefined) return { description, met: null, why: 'a figure it needs is missing (see its section\'s error)', ...detail };
  return { description, ...detail, value, limit: round(limit, 4), met: value <= limit };
}
const HD = Q.hearth.webgpu_kv_device as Fig;
const graphRateAt = (device: 'webgpu' | 'cpu', batch: number): number | undefined => Q.graph_alone[device]?.[`batch_${batch}`]?.tokens_per_s;
for (const [streams, what] of [[1, 'per_stream_decode_tokens_per_s'], [8, 'aggregate_tokens_per_s'], [16, 'aggregate_tokens_per_s']] as const) {
  results.targets[`qwen_streams_${streams}_vs_graph_webgpu`] = target(
    `Hearth ${streams === 1 ? "one stream's decode" : `${streams} streams (aggregate)`} at least 85% of the graph's own rate at batch ${streams} (WebGPU, cache on the device, this run)`,
    rate(HD, streams, what), graphRateAt('webgpu', streams), 0.85,
    { hearth_tokens_per_s: rate(HD, streams, what), graph_tokens_per_s: graphRateAt('webgpu', streams) },
  );
}
results.targets.qwen_ttft_8_streams_vs_idle_webgpu = atMost(
  "Time to first token at 8 streams at most 2.5x one stream's (idle), WebGPU",
  HD?.streams_8?.ttft_ms, HD?.streams_1?.ttft_ms === undefined ? undefined : 2.5 * HD.streams_1.ttft_ms,
  { ttft_8_streams_ms: HD?.streams_8?.ttft_ms, ttft_idle_ms: HD?.streams_1?.ttft_ms },
);
for (const streams of SETTINGS.qwen.streams) {
  const b = HD?.[`streams_${streams}`]?.step_breakdown;
  results.targets[`qwen_host_per_row_streams_${streams}_webgpu`] = atMost(
    `Host time at most 0.1 ms a row (all but the graph's runs), WebGPU, ${streams} stream${streams > 1 ? 's' : ''}`,
    b?.host_ms_per_row, 0.1, {
      host_ms_per_row_without_head: b?.host_ms_per_row_without_head,
      logits_ms_per_row: b?.phases_ms_per_row?.logits,
      gc_ms_per_row: HD?.[`streams_${streams}`]?.gc?.ms_per_row,
    },
  );
}
// Hearth against what the graph allows, and against PyTorch, at each batch (no target; for the record).
const shares: Record<string, unknown> = {};
for (const device of ['webgpu', 'cpu'] as const) {
  const h = Q.hearth[device === 'webgpu' ? 'webgpu_kv_device' : 'cpu'] as Fig;
  for (const streams of SETTINGS.graph_rate.batches) {
    const g = graphRateAt(device, streams);
    const mine = rate(h, streams, streams === 1 ? 'per_stream_decode_tokens_per_s' : 'aggregate_tokens_per_s');
    if (g !== undefined && mine !== undefined) shares[`${device}_streams_${streams}`] = round(mine / g, 2);
  }
}
results.qwen_share_of_graph_rate = shares;
const vsTorch: Record<string, unknown> = {};
for (const streams of SETTINGS.pytorch.streams) {
  const theirs = (Q.pytorch.gpu as Fig)?.[`streams_${streams}`]?.aggregate_tokens_per_s;
  const mine = rate(HD, streams, 'aggregate_tokens_per_s');
  if (theirs !== undefined && mine !== undefined) vsTorch[`streams_${streams}`] = round(mine / theirs, 2);
}
results.qwen_hearth_webgpu_vs_pytorch = vsTorch;
// What keeping the cache on the device is worth (no target; for the record).
const kv: Record<string, unknown> = {};
for (const [label, where] of [['bench_plain', B.plain], ['bench_fused', B.fused], ['qwen', Q.hearth]] as const) {
  for (const key of Object.keys(where.webgpu_kv_device ?? {}).filter((k) => k.startsWith('streams_'))) {
    const d = where.webgpu_kv_device[key]?.aggregate_tokens_per_s;
    const hst = where.webgpu_kv_host?.[key]?.aggregate_tokens_per_s;
    if (d !== undefined && hst !== undefined && hst > 0) kv[`${label}_${key}`] = round(d / hst, 2);
  }
}
results.kv_on_device_speedup = kv;
results.total_s = round((performance.now() - started) / 1000);
save();
rmSync(scratch, { recursive: true, force: true });
log(`wrote ${out} in ${results.total_s} s`);
for (const s of results.sections as { name: string; error?: string; skipped?: string; seconds: number }[]) {
  log(`  ${s.name}: ${s.error ? `ERROR ${s.error}` : s.skipped ? `skipped (${s.skipped})` : 'ok'} (${s.seconds} s)`);
}
for (const [k, t] of Object.entries(results.targets as Record<string, { met: boolean | null; ratio?: number }>)) log(`  target ${k}: ${t.met === null ? 'no figure' : t.met ? 'met' : 'not met'}${t.ratio !== undefined ? ` (${t.ratio}x)` : ''}`);
process.exit(0);
