// What onnxruntime itself allows for the bench model on this machine, whatever an engine
// around it does. Two ceilings, measured in the bench's own run so the targets can be
// read against them:
// - 8 streams: a step makes at most 8 tokens and cannot be shorter than the graph run at
//   batch 8; for scale, the same step with nothing but its weight matmuls (the same MatMul
//   nodes, shapes and kernels) is measured too;
// - long contexts: a decode step cannot be shorter than the graph run at that context with
//   its outputs fetched (every export hands back the whole cache as present.*).
import type * as ort from 'onnxruntime-node';
import { BENCH_CONFIG, benchChat } from '../models/fixtures.js';
import { GraphBuilder, TensorType } from '../src/onnx/graph.js';
import { nodeBackend } from '../src/backends/node.js';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** bench-chat's weight matmuls alone, each on an input of its own: no norms, attention or KV. */
function weightMatmulGraph(): Uint8Array {
  const w = benchChat();
  const { hidden: H, heads, kvHeads, headDim: D, intermediate: I, vocabSize: V } = w.config;
  const g = new GraphBuilder('weight-matmuls');
  const inputs = { hidden: g.input('hidden', TensorType.FLOAT, ['batch', H]), attn: g.input('attn', TensorType.FLOAT, ['batch', heads * D]), mlp: g.input('mlp', TensorType.FLOAT, ['batch', I]) };
  let n = 0;
  const matmul = (x: string, name: string, dims: [number, number], data: Float32Array) => {
    const out = `out${n++}`;
    g.output(out, g.node('MatMul', [x, g.weight(name, dims, data)], {}, `${name}.y`), TensorType.FLOAT, ['batch', dims[1]]);
  };
  w.layers.forEach((L, i) => {
    matmul(inputs.hidden, `${i}.q`, [H, heads * D], L.q);
    matmul(inputs.hidden, `${i}.k`, [H, kvHeads * D], L.k);
    matmul(inputs.hidden, `${i}.v`, [H, kvHeads * D], L.v);
    matmul(inputs.attn, `${i}.o`, [heads * D, H], L.o);
    matmul(inputs.hidden, `${i}.gate`, [H, I], L.gate);
    matmul(inputs.hidden, `${i}.up`, [H, I], L.up);
    matmul(inputs.mlp, `${i}.down`, [I, H], L.down);
  });
  matmul(inputs.hidden, 'lm_head', [H, V], w.lmHead);
  return g.toBytes();
}

/** One decode step's feeds for `batch` rows after `past` cached tokens, from the session's own inputs. */
function decodeFeeds(session: ort.InferenceSession, Tensor: typeof ort.Tensor, batch: number, past: number): Record<string, ort.Tensor> {
  const { kvHeads, headDim } = BENCH_CONFIG;
  const ints = (n: number, v: bigint, dims: number[]) => new Tensor('int64', new BigInt64Array(n).fill(v), dims);
  const feeds: Record<string, ort.Tensor> = {};
  for (const name of session.inputNames) {
    if (name === 'input_ids') feeds[name] = ints(batch, 5n, [batch, 1]);
    else if (name === 'attention_mask') feeds[name] = ints(batch * (past + 1), 1n, [batch, past + 1]);
    else if (name === 'position_ids') feeds[name] = ints(batch, BigInt(past), [batch, 1]);
    else if (name.startsWith('past_key_values.')) feeds[name] = kvTensor(session, Tensor, name, [batch, kvHeads, past, headDim]);
    else throw new Error(`bench ceilings: unexpected input ${name}`);
  }
  return feeds;
}

/** A past KV input of the session's own type: float32, or float16 (as Uint16Array halves, 0.01 ≈ 0x211f). */
function kvTensor(session: ort.InferenceSession, Tensor: typeof ort.Tensor, name: string, dims: number[]): ort.Tensor {
  const n = dims.reduce((a, b) => a * b, 1);
  const meta = session.inputMetadata.find((m) => m.name === name) as { type?: string } | undefined;
  if (meta?.type === 'float16') return new Tensor('float16', new Uint16Array(n).fill(0x211f), dims);
  return new Tensor('float32', new Float32Array(n).fill(0.01), dims);
}

/** Medians (ms) of each run, the runs interleaved round by round so that load on the machine hits them alike. */
async function interleaved(runs: Record<string, () => Promise<unknown>>, rounds: number): Promise<Record<string, number>> {
  const times: Record<string, number[]> = Object.fromEntries(Object.keys(runs).map((k) => [k, []]));
  for (let r = -2; r < rounds; r++) {
    for (const [name, run] of Object.entries(runs)) {
      const t0 = performance.now();
      await run();
      if (r >= 0) times[name]!.push(performance.now() - t0); // two warm-up rounds
    }
  }
  return Object.fromEntries(Object.entries(times).map(([k, v]) => [k, Math.round(median(v) * 100) / 100]));
}

export interface Ceilings {
  /** ms: the whole graph at batch 1 and at batch 8 (60 cached tokens), and its weight matmuls alone at batch 8. */
  graph_batch1_ms: number;
  graph_batch8_ms: number;
  weight_matmuls_batch8_ms: number;
  /** ms: the whole graph at batch 1 after the short and the long prompt, with all outputs fetched and with the logits only. */
  graph_short_context_ms: number;
  graph_long_context_ms: number;
  graph_long_context_logits_only_ms: number;
}

/** The graph's decode steps every ceiling measures: batch 1 and 8 after 60 cached tokens, batch 1 after the short and the long prompt. */
function graphRuns(graph: ort.InferenceSession, Tensor: typeof ort.Tensor, shortPast: number, longPast: number) {
  const feeds = {
    graph_batch1_ms: decodeFeeds(graph, Tensor, 1, 60),
    graph_batch8_ms: decodeFeeds(graph, Tensor, 8, 60),
    graph_short_context_ms: decodeFeeds(graph, Tensor, 1, shortPast),
    graph_long_context_ms: decodeFeeds(graph, Tensor, 1, longPast),
  };
  return Object.fromEntries(Object.entries(feeds).map(([k, f]) => [k, () => graph.run(f)])) as Record<keyof typeof feeds, () => Promise<unknown>>;
}

export async function measureCeilings(modelPath: string, shortPast: number, longPast: number, rounds = 21): Promise<Ceilings> {
  const backend = nodeBackend('cpu');
  const graph = (await backend.createSession(modelPath)) as ort.InferenceSession;
  const matmuls = (await backend.createSession(weightMatmulGraph())) as ort.InferenceSession;
  const { hidden, heads, headDim, intermediate } = BENCH_CONFIG;
  const floats = (rows: number, cols: number) => new backend.Tensor('float32', new Float32Array(rows * cols).fill(0.01), [rows, cols]);
  const matmulFeeds = { hidden: floats(8, hidden), attn: floats(8, heads * headDim), mlp: floats(8, intermediate) };
  const runs = graphRuns(graph, backend.Tensor, shortPast, longPast);
  const long = decodeFeeds(graph, backend.Tensor, 1, longPast);
  const t = await interleaved(
    {
      ...runs,
      weight_matmuls_batch8_ms: () => matmuls.run(matmulFeeds),
      graph_long_context_logits_only_ms: () => graph.run(long, ['logits']),
    },
    rounds,
  );
  await graph.release();
  await matmuls.release();
  return t as unknown as Ceilings;
}

export interface FormCeilings {
  /** ms: the graph alone at batch 1 and 8 (60 cached tokens), and at batch 1 after the short and the long prompt. */
  graph_batch1_ms: number;
  graph_batch8_ms: number;
  graph_short_context_ms: number;
  graph_long_context_ms: number;
  /** What an engine could reach at best on this graph: a step no longer than its graph run. */
  batch1_max_tokens_per_s: number;
  concurrency8_max_tokens_per_s: number;
  long_context_max_ratio: number;
}

/** The same ceilings for any form of the bench model (its own dtype, attention and quantization). */
export async function measureFormCeilings(modelPath: string, shortPast: number, longPast: number, rounds = 15): Promise<FormCeilings> {
  const backend = nodeBackend('cpu');
  const graph = (await backend.createSession(modelPath)) as ort.InferenceSession;
  const t = await interleaved(graphRuns(graph, backend.Tensor, shortPast, longPast), rounds);
  await graph.release();
  const r2 = (x: number) => Math.round(x * 100) / 100;
  return {
    graph_batch1_ms: t.graph_batch1_ms!,
    graph_batch8_ms: t.graph_batch8_ms!,
    graph_short_context_ms: t.graph_short_context_ms!,
    graph_long_context_ms: t.graph_long_context_ms!,
    batch1_max_tokens_per_s: r2(1000 / t.graph_batch1_ms!),
    concurrency8_max_tokens_per_s: r2(8000 / t.graph_batch8_ms!),
    long_context_max_ratio: r2(t.graph_short_context_ms! / t.graph_long_context_ms!),
  };
}

/**
 * One form's graph, kept open so that its runs can be timed between the engine's own rounds: on a
 * shared machine a ceiling measured minutes apart from the engine differs by as much as the gap
 * being measured. Each call returns the median ms of `runs` runs.
 */
export async function openGraphTimer(modelPath: string) {
  const backend = nodeBackend('cpu');
  const graph = (await backend.createSession(modelPath)) as ort.InferenceSession;
  const timed = async (feeds: Record<string, ort.Tensor>, runs: number) => {
    const ms: number[] = [];
    await graph.run(feeds); // a warm-up for this shape
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      await graph.run(feeds);
      ms.push(performance.now() - t0);
    }
    return Math.round(median(ms) * 100) / 100;
  };
  return {
    /** A decode step of `batch` rows after `past` cached tokens, all outputs fetched. */
    decode: (batch: number, past: number, runs: number) => timed(decodeFeeds(graph, backend.Tensor, batch, past), runs),
    /** The prefill of `batch` prompts of `tokens` tokens each, in one run from an empty cache. */
    prefill: (batch: number, tokens: number, runs: number) => timed(prefillFeeds(graph, backend.Tensor, batch, tokens), runs),
    release: () => graph.release(),
  };
}

/** A first run's feeds: `batch` prompts of `tokens` tokens, an empty past, from the session's own inputs. */
function prefillFeeds(session: ort.InferenceSession, Tensor: typeof ort.Tensor, batch: number, tokens: number): Record<string, ort.Tensor> {
  const { kvHeads, headDim } = BENCH_CONFIG;
  const n = batch * tokens;
  const feeds: Record<string, ort.Tensor> = {};
  for (const name of session.inputNames) {
    if (name === 'input_ids') feeds[name] = new Tensor('int64', new BigInt64Array(n).fill(5n), [batch, tokens]);
    else if (name === 'attention_mask') feeds[name] = new Tensor('int64', new BigInt64Array(n).fill(1n), [batch, tokens]);
    else if (name === 'position_ids') feeds[name] = new Tensor('int64', BigInt64Array.from({ length: n }, (_, i) => BigInt(i % tokens)), [batch, tokens]);
    else if (name.startsWith('past_key_values.')) feeds[name] = kvTensor(session, Tensor, name, [batch, kvHeads, 0, headDim]);
    else throw new Error(`bench ceilings: unexpected input ${name}`);
  }
  return feeds;
}
