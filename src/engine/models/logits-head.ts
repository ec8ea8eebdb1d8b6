// What a graph run hands the sampler. A row of logits is the vocabulary wide (151,936 for
// Qwen): reading it to the host, converting it and scanning it in JavaScript cost about 2 ms a
// row a step on an H200's host, so a batch's GPU step waited on the host. Instead a second,
// small graph on the same provider takes the model's logits where they are (on WebGPU a
// device buffer) and returns each row's best K candidates and its log-normaliser; only rows
// whose sampling needs the whole row (a grammar mask, penalties, a draw past the candidates)
// fetch it, for that step only. WebLLM moved its sampling to the GPU for the same reason.
// Greedy rows without logprobs read neither: the model's own run returns each position's best
// token beside the logits (best-token.ts), as a second run costs ~2 ms on WebGPU in Node.
import { blocking } from './best-token.js';
import { GraphBuilder, TensorType } from '../../onnx/graph.js';
import type { Backend, InferenceSession, Tensor } from '../../backends/types.js';
import type { RowCandidates } from '../sampling/sampler.js';
import { toFloat32 } from './interface.js';
import { freeHostBuffers } from './host-buffers.js';

/** Candidates a row comes with: top_k and top_logprobs up to it need no whole row. */
export const HEAD_CANDIDATES = 64;

export type HeadTopK = 'single' | 'blocked';

/** Which outputs a head graph has: onnxruntime runs every node of a graph whatever a run
 * fetches, so each use gets a graph of its own (the normaliser alone doubled a greedy row's cost).
 * `best`: each row's best token alone, for greedy rows that ask no logprobs. */
export type HeadOutputs = 'best' | 'candidates' | 'candidates+lse' | 'whole' | 'all';

/**
 * The head graph. Inputs: `logits` [batch, positions, vocab] as the model emits them,
 * `rows` (int64, the rows of logits flattened to [batch × positions, vocab] to read) and
 * `inv_temperature` (float32, one a row read). Outputs: `values`/`indices` (each row's best
 * K, best first, ties by the lower id), `lse` (log Σ exp(logit × inv_temperature)) and
 * `whole` (the rows as float32); `outputs` picks which the graph has (`inv_temperature` is
 * an input only where `lse` is an output).
 *
 * `blocked`: the top K of each block of the row, then the top K of those, where one TopK
 * over the whole row is a long sort on the device (onnxruntime's WebGPU TopK is a bitonic
 * sort: 171 passes for 8 × 151,936); the order is the same (ties stay by id: blocks are in
 * id order, and each block's winners too).
 *
 * `best` (outputs): the row's maximum and the lowest id holding it (a reduction, no sort;
 * onnxruntime's ArgMax does not promise the lowest id on every device; by blocks where `topK`
 * is 'blocked'): `values`/`indices` with one column, `indices` as float32 (exact below 2^24).
 */
export function logitsHeadGraph(vocab: number, logitsType: 'float32' | 'float16', topK: HeadTopK, outputs: HeadOutputs = 'all', k = HEAD_CANDIDATES): Uint8Array {
  const want = { whole: outputs === 'whole' || outputs === 'all', candidates: outputs !== 'whole' && outputs !== 'best', lse: outputs === 'candidates+lse' || outputs === 'all' };
  const g = new GraphBuilder(`hearth_logits_head_${topK}`);
  const input = g.input('logits', logitsType === 'float16' ? TensorType.FLOAT16 : TensorType.FLOAT, ['batch', 'positions', vocab]);
  const rows = g.input('rows', TensorType.INT64, ['rows']);
  const flat = g.node('Reshape', [input, g.ints('flat', [-1, vocab])]);
  const picked = g.node('Gather', [flat, rows], { axis: 0 });
  const whole = logitsType === 'float16' ? g.node('Cast', [picked], { to: TensorType.FLOAT }) : picked;
  if (want.whole) g.output('whole', whole, TensorType.FLOAT, ['rows', vocab]);
  if (want.candidates) candidatesOf(g, whole, vocab, topK, k);
  if (outputs === 'best') bestOf(g, whole, vocab, topK);
  // log Σ exp(x·s) as max + log Σ exp(x·s − max): ops every provider runs on its device.
  if (want.lse) {
    const invT = g.input('inv_temperature', TensorType.FLOAT, ['rows']);
    const scaled = g.node('Mul', [whole, g.node('Unsqueeze', [invT, g.ints('axis1', [1])])]);
    const max = g.node('ReduceMax', [scaled], { axes: [1], keepdims: 1 });
    const sum = g.node('ReduceSum', [g.node('Exp', [g.node('Sub', [scaled, max])]), g.ints('axes', [1])], { keepdims: 1 });
    const lse = g.node('Add', [g.node('Log', [sum]), max]);
    g.output('lse', g.node('Reshape', [lse, g.ints('row', [-1])]), TensorType.FLOAT, ['rows']);
  }
  return g.toBytes();
}

/**
 * `values` / `indices` of one column: each row's maximum and the lowest id holding it. `blocked`
 * (a GPU's form): within about 128 blocks of the row, then over them, as best-token.ts does; a
 * reduction over the whole row is one workgroup's walk there.
 */
function bestOf(g: GraphBuilder, whole: string, vocab: number, topK: HeadTopK): void {
  const { size, blocks, pad } = topK === 'blocked' ? blocking(vocab) : { size: vocab, blocks: 1, pad: 0 };
  const padded = pad ? g.node('Pad', [whole, g.ints('pads', [0, 0, 0, pad]), g.scalar('pad_value', -Infinity)]) : whole;
  const x = g.node('Reshape', [padded, g.ints('blocked', [-1, blocks, size])]);
  const max = g.node('ReduceMax', [g.node('ReduceMax', [x], { axes: [2], keepdims: 0 })], { axes: [1], keepdims: 1 });
  const offsets = g.weight('offsets', [size], Float32Array.from({ length: size }, (_, i) => i));
  const starts = g.weight('block_starts', [blocks], Float32Array.from({ length: blocks }, (_, b) => b * size));
  const atMax = g.node('Where', [g.node('Equal', [x, g.node('Unsqueeze', [max, g.ints('axis2', [2])])]), offsets, g.scalar('no_id', Infinity)]);
  const ids = g.node('Add', [g.node('ReduceMin', [atMax], { axes: [2], keepdims: 0 }), starts]);
  g.output('values', max, TensorType.FLOAT, ['rows', 1]);
  g.output('indices', g.node('ReduceMin', [ids], { axes: [1], keepdims: 1 }), TensorType.FLOAT, ['rows', 1]);
}

/** `values` / `indices`: each row's best k, best first, ties by the lower id. */
function candidatesOf(g: GraphBuilder, whole: string, vocab: number, topK: HeadTopK, k: number): void {
  const kk = Math.min(k, vocab);
  const block = 2048;
  if (topK === 'blocked' && vocab > 2 * block) {
    const blocks = Math.ceil(vocab / block);
    const padded = g.node('Pad', [whole, g.ints('pads', [0, 0, 0, blocks * block - vocab]), g.scalar('neg_inf', -Infinity)], { mode: 'constant' });
    const tiles = g.node('Reshape', [padded, g.ints('tiles', [0, blocks, block])]);
    const [bv, bi] = g.nodeN('TopK', [tiles, g.ints('k_block', [kk])], 2, { axis: -1, largest: 1, sorted: 1 });
    const offsets = g.ints('offsets', Array.from({ length: blocks }, (_, b) => b * block), [blocks, 1]);
    const ids = g.node('Reshape', [g.node('Add', [bi, offsets]), g.ints('winners', [0, blocks * kk])]);
    const vals = g.node('Reshape', [bv, g.ints('winners_v', [0, blocks * kk])]);
    const [values, at] = g.nodeN('TopK', [vals, g.ints('k', [kk])], 2, { axis: -1, largest: 1, sorted: 1 });
    g.output('values', values, TensorType.FLOAT, ['rows', kk]);
    g.output('indices', g.node('GatherElements', [ids, at], { axis: 1 }), TensorType.INT64, ['rows', kk]);
  } else {
    const [values, indices] = g.nodeN('TopK', [whole, g.ints('k', [kk])], 2, { axis: -1, largest: 1, sorted: 1 });
    g.output('values', values, TensorType.FLOAT, ['rows', kk]);
    g.output('indices', indices, TensorType.INT64, ['rows', kk]);
  }
}

/** The head of one model: its sessions, opened at load on the model's provider. */
export class LogitsHead {
  private whole$: Promise<InferenceSession> | undefined;
  private best$: Promise<InferenceSession> | undefined;

  private constructor(
    private readonly backend: Backend,
    private readonly candidatesSession: InferenceSession,
    private readonly graph: (outputs: HeadOutputs) => Uint8Array,
    readonly vocab: number,
    readonly topK: HeadTopK,
  ) {}

  static async open(backend: Backend, vocab: number, logitsType: 'float32' | 'float16', chosen?: HeadTopK): Promise<LogitsHead> {
    // One TopK over the row on the CPU (a selection there); by blocks on a GPU (a sort there).
    const topK: HeadTopK = chosen ?? (backend.device === 'cpu' || backend.device === 'wasm' ? 'single' : 'blocked');
    const graph = (outputs: HeadOutputs) => logitsHeadGraph(vocab, logitsType, topK, outputs);
    return new LogitsHead(backend, await backend.createSession(graph('candidates+lse')), graph, vocab, topK);
  }

  /** The best candidates of `rows` (flattened rows of `logits`), with each row's normaliser at its temperature. */
  async candidates(logits: Tensor, rows: number[], temperatures: number[]): Promise<RowCandidates[]> {
    const inv_temperature = new this.backend.Tensor('float32', Float32Array.from(temperatures, (t) => 1 / t), [rows.length]);
    const out = await this.candidatesSession.run({ logits, rows: this.rowsTensor(rows), inv_temperature });
    return this.rowsOf(rows, out.values.data as Float32Array, out.indices.data as BigInt64Array, out.lse.data as Float32Array);
  }

  /**
   * The best token of `rows` alone (greedy rows that ask no logprobs): no normaliser (NaN).
   * Opened on first use: most graphs return it themselves (best-token.ts).
   */
  async best(logits: Tensor, rows: number[]): Promise<RowCandidates[]> {
    this.best$ ??= this.backend.createSession(this.graph('best'));
    const out = await (await this.best$).run({ logits, rows: this.rowsTensor(rows) });
    return this.rowsOf(rows, out.values.data as Float32Array, out.indices.data as Float32Array, null);
  }

  private rowsOf(rows: number[], values: Float32Array, indices: BigInt64Array | Float32Array, lse: Float32Array | null): RowCandidates[] {
    const k = values.length / rows.length;
    return rows.map((_, r) => ({
      ids: Array.from(indices.subarray(r * k, (r + 1) * k), Number),
      logits: values.subarray(r * k, (r + 1) * k),
      lse: lse ? lse[r]! : NaN,
      complete: k === this.vocab,
    }));
  }

  /** Whole rows as float32: read where they are on the host, else through the head on the device. */
  async whole(logits: Tensor, rows: number[]): Promise<Float32Array[]> {
    const vocab = this.vocab;
    if (logits.location === 'cpu' || logits.location === undefined) return rows.map((r) => toFloat32(logits, r * vocab, (r + 1) * vocab));
    // Opened the first time a row on the device is read whole (the model's warm-up does).
    this.whole$ ??= this.backend.createSession(this.graph('whole'));
    const out = await (await this.whole$).run({ logits, rows: this.rowsTensor(rows) });
    const data = out.whole.data as Float32Array;
    return rows.map((_, i) => data.subarray(i * vocab, (i + 1) * vocab));
  }

  private rowsTensor(rows: number[]): Tensor {
    return new this.backend.Tensor('int64', BigInt64Array.from(rows, BigInt), [rows.length]);
  }

  async dispose(): Promise<void> {
    const opened = await Promise.all([this.whole$, this.best$].map((s) => s?.catch(() => undefined)));
    await Promise.all([this.candidatesSession.release(), ...opened.map((s) => s?.release())]);
  }
}

/** Each position's best token as the model's graph computed it beside the logits (best-token.ts), by flattened row. */
export interface BestTokens {
  ids: Float32Array;
  logits: Float32Array;
}

/**
 * The logits of one graph run, as the sampler reads them: row `i` of the step is row
 * `rows[i]` of the output flattened (a decode step's row r, a prefill row's last token).
 * Disposed once every row is sampled (on the device, its buffer is freed).
 */
export class StepLogits {
  constructor(
    private readonly head: LogitsHead,
    private readonly tensor: Tensor,
    private readonly rows: number[],
    /** Where the graph has them: no head run for greedy rows. */
    private readonly bestTokens?: BestTokens,
  ) {}

  /** Candidates read ahead (prefetch), by item and temperature. */
  private readonly fetched = new Map<string, RowCandidates>();

  get size(): number {
    return this.rows.length;
  }

  async candidates(items: number[], temperatures: number[]): Promise<RowCandidates[]> {
    const key = (i: number) => `${items[i]}@${temperatures[i]}`;
    if (items.every((_, i) => this.fetched.has(key(i)))) return items.map((_, i) => this.fetched.get(key(i))!);
    return this.head.candidates(this.tensor, items.map((i) => this.rows[i]), temperatures);
  }

  /**
   * Reads the candidates of several items in one head run, for candidates() to hand out later:
   * a speculative step samples its positions one at a time (each after the tokens before it),
   * and one head run for all of them costs about what one costs.
   */
  async prefetch(items: number[], temperature: number): Promise<void> {
    const rows = await this.head.candidates(this.tensor, items.map((i) => this.rows[i]), items.map(() => temperature));
    items.forEach((item, i) => this.fetched.set(`${item}@${temperature}`, rows[i]!));
  }

  async best(items: number[]): Promise<RowCandidates[]> {
    const rows = items.map((i) => this.rows[i]!);
    const best = this.bestTokens;
    if (!best) return this.head.best(this.tensor, rows);
    return rows.map((r) => ({ ids: [best.ids[r]!], logits: best.logits.subarray(r, r + 1), lse: NaN, complete: this.head.vocab === 1 }));
  }

  whole(items: number[]): Promise<Float32Array[]> {
    return this.head.whole(this.tensor, items.map((i) => this.rows[i]));
  }

  dispose(): void {
    // The head reads rows into arrays of its own, so nothing holds views of these. A second
    // dispose finds the device tensor's location 'none' and does nothing.
    if (this.tensor.location === 'gpu-buffer') this.tensor.dispose();
    else if (this.tensor.location === 'cpu') freeHostBuffers([this.tensor.data as ArrayBufferView]);
  }
}

/** One row of a step as float32, for checks that compare logits. */
export async function wholeRow(row: { step: StepLogits; index: number }): Promise<Float32Array> {
  return (await row.step.whole([row.index]))[0]!;
}
