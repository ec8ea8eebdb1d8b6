// Whether a device runs GroupQueryAttention (onnxruntime-genai exports' fused attention) as
// the CPU does, checked once on the adapter at hand. onnxruntime 1.30's WebGPU kernels were
// seen wrong on SwiftShader for 32 or more new tokens in a run (Node) and for rows of
// different lengths in one run (the page), yet right on an H200 for both: so each workaround
// is applied where this check finds the fault, not by assumption. A single attention node
// with a rotary, fed the same values on the device and on the reference provider: a few
// milliseconds.
import { GraphBuilder, TensorType } from '../onnx/graph.js';
import type { FusedAttentionWorkarounds, InferenceSession, Tensor } from './types.js';

/** Opens the check's graph on the device under test, or on the reference (the CPU, or WASM in a page). */
export type OpenCheckSession = (graph: Uint8Array, on: 'device' | 'reference') => Promise<InferenceSession>;

const HEADS = 2;
const KV_HEADS = 1;
const HEAD_DIM = 16;
const POSITIONS = 256;
const WIDTH = (HEADS + 2 * KV_HEADS) * HEAD_DIM;
/** Far above float rounding (≤ 1e-6 here), far below the faults seen (≥ 1e-2). */
const TOLERANCE = 1e-3;

/** One GroupQueryAttention node as onnxruntime-genai's builder writes it (rotary inside, seqlens_k from the mask). */
export function fusedAttentionGraph(): Uint8Array {
  const g = new GraphBuilder('hearth_gqa_check');
  const qkv = g.input('qkv', TensorType.FLOAT, ['batch', 'new', WIDTH]);
  const pastKey = g.input('past_key', TensorType.FLOAT, ['batch', KV_HEADS, 'past', HEAD_DIM]);
  const pastValue = g.input('past_value', TensorType.FLOAT, ['batch', KV_HEADS, 'past', HEAD_DIM]);
  const mask = g.input('attention_mask', TensorType.INT64, ['batch', 'total']);
  const sum = g.node('ReduceSum', [mask, g.ints('axes', [1])], { keepdims: 0 });
  const seqlensK = g.node('Cast', [g.node('Sub', [sum, g.ints('one', [1], [])])], { to: TensorType.INT32 });
  const width = g.node('Gather', [g.node('Shape', [mask]), g.ints('at', [1], [])], { axis: 0 });
  const total = g.node('Cast', [width], { to: TensorType.INT32 });
  const half = HEAD_DIM / 2;
  const angle = (t: number, i: number) => t / 10000 ** ((2 * i) / HEAD_DIM);
  const table = (f: (x: number) => number) => Float32Array.from({ length: POSITIONS * half }, (_, k) => f(angle(Math.floor(k / half), k % half)));
  const [out] = g.contribN(
    'GroupQueryAttention',
    [qkv, '', '', pastKey, pastValue, seqlensK, total, g.weight('cos_cache', [POSITIONS, half], table(Math.cos)), g.weight('sin_cache', [POSITIONS, half], table(Math.sin))],
    { num_heads: HEADS, kv_num_heads: KV_HEADS, scale: { float: 1 / Math.sqrt(HEAD_DIM) }, local_window_size: -1, softcap: { float: 0 }, do_rotary: 1, rotary_interleaved: 0 },
    ['output', 'present_key', 'present_value'],
  );
  g.output('output', out!, TensorType.FLOAT, ['batch', 'new', HEADS * HEAD_DIM]);
  return g.toBytes();
}

/** Deterministic values in [-1, 1). */
const values = (n: number, seed: number) => Float32Array.from({ length: n }, (_, i) => ((i * 7919 + seed * 104729) % 2000) / 1000 - 1);

/**
 * A run of right-padded rows (as Hearth lays out fused batches): row r has `pasts[r]` cached
 * and `fresh[r]` new tokens. Its inputs, and which output positions are real (the padding's
 * outputs are anything).
 */
function caseOf(TensorCtor: typeof Tensor, pasts: number[], fresh: number[]) {
  const batch = pasts.length;
  const past = Math.max(...pasts);
  const len = Math.max(...fresh);
  const mask = new BigInt64Array(batch * (past + len));
  pasts.forEach((p, r) => mask.fill(1n, r * (past + len), r * (past + len) + p + fresh[r]!));
  const feeds = {
    qkv: new TensorCtor('float32', values(batch * len * WIDTH, 1), [batch, len, WIDTH]),
    past_key: new TensorCtor('float32', values(batch * KV_HEADS * past * HEAD_DIM, 2), [batch, KV_HEADS, past, HEAD_DIM]),
    past_value: new TensorCtor('float32', values(batch * KV_HEADS * past * HEAD_DIM, 3), [batch, KV_HEADS, past, HEAD_DIM]),
    attention_mask: new TensorCtor('int64', mask, [batch, past + len]),
  };
  const real = (r: number, position: number) => position < fresh[r]!;
  return { feeds, batch, len, real };
}

/** The largest difference between the device's and the reference's outputs at real positions. */
async function difference(device: InferenceSession, reference: InferenceSession, TensorCtor: typeof Tensor, pasts: number[], fresh: number[]): Promise<number> {
  const { feeds, batch, len, real } = caseOf(TensorCtor, pasts, fresh);
  const a = (await device.run(feeds)).output!.data as Float32Array;
  const b = (await reference.run(feeds)).output!.data as Float32Array;
  const row = HEADS * HEAD_DIM;
  let most = 0;
  for (let r = 0; r < batch; r++) {
    for (let p = 0; p < len; p++) {
      if (!real(r, p)) continue;
      for (let k = 0; k < row; k++) {
        const at = (r * len + p) * row + k;
        const d = Math.abs(a[at]! - b[at]!);
        most = Number.isNaN(d) ? Infinity : Math.max(most, d);
      }
    }
  }
  return most;
}

/**
 * Runs the checks: a prompt of 64 new tokens (and, where wrong, the longest of 31, 16, 8 that is
 * right), then rows of different lengths together, as first prompts and as decode steps after
 * pasts of different lengths.
 */
export async function checkFusedAttention(open: OpenCheckSession, TensorCtor: typeof Tensor): Promise<FusedAttentionWorkarounds> {
  const graph = fusedAttentionGraph();
  const [device, reference] = await Promise.all([open(graph, 'device'), open(graph, 'reference')]);
  try {
    const wrong = async (pasts: number[], fresh: number[]) => (await difference(device, reference, TensorCtor, pasts, fresh)) > TOLERANCE;
    const result: FusedAttentionWorkarounds = { applied: [] };
    if (await wrong([0], [64])) {
      let chunk = 1;
      for (const n of [31, 16, 8]) {
        if (!(await wrong([0], [n]))) {
          chunk = n;
          break;
        }
      }
      result.maxNewTokens = chunk;
      result.applied.push(`prompts prefill in chunks of ${chunk} tokens (this adapter's GroupQueryAttention differs from the reference for 64 new tokens in a run)`);
    }
    if ((await wrong([0, 0], [2, 5])) || (await wrong([3, 7], [1, 1]))) {
      result.oneRowPerRun = true;
      result.applied.push("one row a run (this adapter's GroupQueryAttention differs from the reference for rows of different lengths in one run)");
    }
    return result;
  } finally {
    await Promise.all([device.release(), reference.release()]);
  }
}
