// KV copy plans on onnxruntime-node's WebGPU provider. The binding exposes no GPUDevice to
// copy buffers with, and cannot read a GPU tensor back (getData on one aborts the process),
// so a plan runs as a tiny ONNX graph on the same provider: each source viewed as rows of
// `unit` elements, concatenated with one zero row, gathered by an index the plan gives
// (padding pointing at the zero row), and reshaped to the plan's dims. Its outputs stay on
// the GPU (joining and leaving the batch) or come to the host (the one read of a sequence
// the prefix cache stores). The provider runs every session on one device and queue, so
// the copy sees everything the model's run wrote, and the model's next run sees the copy.
import { GraphBuilder } from '../onnx/graph.js';
import { TensorType } from '../onnx/proto.js';
import type { CopyPlan, KvArray } from './kv.js';
import type { InferenceSession, Tensor } from './types.js';

export type CopyTarget = 'gpu-buffer' | 'cpu';
type KvElement = 'float32' | 'float16';

/** Opens a graph on the provider, its outputs left where `target` says. */
export type OpenCopySession = (graph: Uint8Array, outputs: string[], target: CopyTarget) => Promise<InferenceSession>;

const ELEMENT = { float32: TensorType.FLOAT, float16: TensorType.FLOAT16 } as const;

/**
 * The copy graph for `sources` sources of `tensors` tensors each (key and value of every
 * layer: one run moves the whole cache, the index uploaded once). Inputs `s{s}_t{t}` (any
 * [a, b, c, d]), `index` (int32 rows of the concatenation, in output order), `rows` ([-1,
 * unit]), `dims` (the plan's) and `zero` (one row of zeros); outputs `t{t}`.
 */
function copyGraph(sources: number, tensors: number, element: KvElement): { bytes: Uint8Array; outputs: string[] } {
  const type = ELEMENT[element];
  const g = new GraphBuilder(`kv_copy_${sources}x${tensors}_${element}`);
  const index = g.input('index', TensorType.INT32, ['picked']);
  const rows = g.input('rows', TensorType.INT64, [2]);
  const dims = g.input('dims', TensorType.INT64, [4]);
  const zero = g.input('zero', type, [1, 'unit']);
  const outputs: string[] = [];
  for (let t = 0; t < tensors; t++) {
    const parts = Array.from({ length: sources }, (_, s) => g.node('Reshape', [g.input(`s${s}_t${t}`, type, [`a${s}`, `b${s}`, `c${s}`, `d${s}`]), rows]));
    const all = g.node('Concat', [...parts, zero], { axis: 0 });
    const picked = g.node('Gather', [all, index], { axis: 0 });
    // allowzero: a dim of 0 is an empty batch, not "keep the input's dim".
    g.output(`t${t}`, g.node('Reshape', [picked, dims], { allowzero: 1 }), type, ['rows', 'heads', 'width', 'head_dim']);
    outputs.push(`t${t}`);
  }
  return { bytes: g.toBytes(), outputs };
}

const gcd = (a: number, b: number): number => (b ? gcd(b, a % b) : a);

/**
 * The largest run every range, source and the plan are made of (head_dim or more for the
 * plans copy-plan.ts makes), so that the index names rows of it, not single elements.
 */
function unitOf(plan: CopyPlan, sizes: number[]): number {
  let unit = plan.size;
  for (const n of sizes) unit = gcd(unit, n);
  for (const r of plan.ranges) unit = gcd(gcd(gcd(unit, r.from), r.to), r.count);
  return Math.max(1, unit);
}

/** Row i of the output comes from row index[i] of the sources concatenated; the row after them all is the zero row. */
function gatherIndex(plan: CopyPlan, sizes: number[], unit: number): Int32Array {
  const starts: number[] = [];
  let total = 0;
  for (const n of sizes) {
    starts.push(total);
    total += n / unit;
  }
  const index = new Int32Array(plan.size / unit).fill(total);
  for (const r of plan.ranges) {
    const from = starts[r.source]! + r.from / unit;
    const to = r.to / unit;
    for (let k = 0; k < r.count / unit; k++) index[to + k] = from + k;
  }
  return index;
}

/** Runs copy plans as graphs, one session per shape of the call, opened on first use and kept. */
export class GraphKvCopier {
  private readonly sessions = new Map<string, Promise<{ session: InferenceSession; outputs: string[] }>>();

  constructor(
    private readonly tensor: typeof Tensor,
    private readonly open: OpenCopySession,
  ) {}

  /**
   * The plan's result, `sources[s][t]` → tensor t: on the GPU or on the host, per `target`.
   * Sources may be GPU tensors or host ones (a prefix-cache hit batched with a chunk's cache).
   */
  async run(plan: CopyPlan, sources: Tensor[][], target: CopyTarget): Promise<Tensor[]> {
    const element = sources[0]![0]!.type;
    if (element !== 'float32' && element !== 'float16') throw new Error(`KV copies on WebGPU take float32 or float16, not ${element}`);
    const tensors = sources[0]!.length;
    const sizes = sources.map((s) => {
      if (s.length !== tensors || s.some((t) => t.type !== element || t.size !== s[0]!.size)) throw new Error('KV copy sources differ in their tensors');
      return s[0]!.size;
    });
    const { session, outputs } = await this.session(sources.length, tensors, element, target);
    const T = this.tensor;
    const unit = unitOf(plan, sizes);
    const index = gatherIndex(plan, sizes, unit);
    const feeds: Record<string, Tensor> = {
      index: new T('int32', index, [index.length]),
      rows: new T('int64', BigInt64Array.of(-1n, BigInt(unit)), [2]),
      dims: new T('int64', BigInt64Array.from(plan.dims, BigInt), [4]),
      zero: new T(element, element === 'float32' ? new Float32Array(unit) : new Uint16Array(unit), [1, unit]),
    };
    sources.forEach((s, i) =>
      s.forEach((t, j) => {
        // Host arrays arrive flat; the graph declares its sources 4-d.
        feeds[`s${i}_t${j}`] = t.location === 'cpu' && t.dims.length !== 4 ? new T(element, t.data as KvArray, [1, 1, 1, t.size]) : t;
      }),
    );
    const out = await session.run(feeds);
    return outputs.map((name) => out[name]!);
  }

  private session(sources: number, tensors: number, element: KvElement, target: CopyTarget) {
    const key = `${sources}/${tensors}/${element}/${target}`;
    let made = this.sessions.get(key);
    if (!made) {
      const { bytes, outputs } = copyGraph(sources, tensors, element);
      made = this.open(bytes, outputs, target).then((session) => ({ session, outputs }));
      // A failed open is not kept: the next call tries again.
      made.catch(() => this.sessions.delete(key));
      this.sessions.set(key, made);
    }
    return made;
  }
}
