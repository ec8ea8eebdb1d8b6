// A greedy row that asks no logprobs needs its best token alone. Read through the sampling
// head, that is a second graph run a step, and on WebGPU in Node a run that reads anything
// back costs about 2 ms however little it computes (H200, bench/head-rate.ts): at one stream
// that was a third of the step. So at load the decoder's graph gets two more outputs, computed
// from `logits` where they are: each position's maximum logit and the lowest id holding it (a
// reduction, no sort), read with the step's own run.
import { type ModelProto, type NodeProto, DataType, freshNames, opsetVersion } from '../../onnx/model-proto.js';

/** [batch, positions, 1] float32: each position's maximum logit. */
export const BEST_LOGIT_OUTPUT = 'hearth_best_logit';
/** [batch, positions, 1] float32: the lowest id whose logit is that maximum (ids are exact in float32 below 2^24). */
export const BEST_ID_OUTPUT = 'hearth_best_id';

/**
 * How the lowest id is found. `argmax`: ArgMax, whose CPU kernel takes the first of equal
 * logits, in one pass (the CPU and WASM). `least-id`: the least of the ids whose logit equals
 * the maximum (Equal, Where, ReduceMin, by blocks of the row: `blocking`), for devices where
 * onnxruntime's ArgMax does not promise the first; on the CPU those broadcasting passes cost more
 * than the head run they replace (a 0.5B-shaped step went from 27 to 39 ms).
 */
export type BestTokenForm = 'argmax' | 'least-id';

/** The form for a device: one pass where ArgMax takes the first of equal logits. */
export const bestTokenFormFor = (device: string): BestTokenForm => (device === 'cpu' || device === 'wasm' ? 'argmax' : 'least-id');

/**
 * Adds the two outputs to a decoded model, in place; returns why not where it cannot: no
 * `logits` output of known float type and vocabulary width, or the outputs are there already.
 */
export function addBestToken(model: ModelProto, form: BestTokenForm): string | null {
  const graph = model.graph;
  const logits = graph?.output?.find((o) => o.name === 'logits');
  if (!graph || !logits) return 'the graph has no logits output';
  if (graph.output!.some((o) => o.name === BEST_ID_OUTPUT)) return `the graph already has ${BEST_ID_OUTPUT}`;
  const type = logits.type?.tensor_type?.elem_type;
  if (type !== DataType.FLOAT && type !== DataType.FLOAT16) return `logits are of ONNX type ${type}, not float32 or float16`;
  const dims = logits.type?.tensor_type?.shape?.dim ?? [];
  const vocab = Number(dims.at(-1)?.dim_value ?? 0);
  if (dims.length !== 3 || !(vocab > 0) || vocab >= 2 ** 24) return 'the logits have no fixed vocabulary width below 2^24';
  const opset = opsetVersion(model);
  if (opset < 11) return `opset ${opset} is below 11`;

  const fresh = freshNames(graph, 'hearth_best_token');
  const floats = (base: string, values: Float32Array, dims: number[]): string => {
    const name = fresh(base);
    graph.initializer = [...(graph.initializer ?? []), { name, dims, data_type: DataType.FLOAT, raw_data: new Uint8Array(values.buffer.slice(0)) }];
    return name;
  };
  const added: NodeProto[] = [];
  const node = (op: string, input: string[], output: string, attribute: NodeProto['attribute'] = []): string => {
    added.push({ op_type: op, name: fresh(op), input, output: [output], attribute });
    return output;
  };
  const int64s = (base: string, values: number[]): string => {
    const name = fresh(base);
    const raw = new Uint8Array(8 * values.length);
    values.forEach((v, i) => new DataView(raw.buffer).setBigInt64(8 * i, BigInt(v), true));
    graph.initializer = [...(graph.initializer ?? []), { name, dims: [values.length], data_type: DataType.INT64, raw_data: raw }];
    return name;
  };
  // From opset 18 a reduction takes its axes as an input, before as an attribute.
  const reduce = (op: 'ReduceMax' | 'ReduceMin', x: string, { keep = true, output = fresh(op) } = {}): string => {
    const keepdims = { name: 'keepdims', type: 2, i: keep ? 1 : 0 };
    return opset >= 18 ? node(op, [x, int64s('axis', [-1])], output, [keepdims]) : node(op, [x], output, [{ name: 'axes', type: 7, ints: [-1] }, keepdims]);
  };
  const reshape = (x: string, dims: number[]): string => node('Reshape', [x, int64s('shape', dims)], fresh('reshaped'));

  const toFloat = [{ name: 'to', type: 2, i: DataType.FLOAT }];
  const x = type === DataType.FLOAT16 ? node('Cast', ['logits'], fresh('logits_float'), toFloat) : 'logits';
  if (form === 'argmax') {
    reduce('ReduceMax', x, { output: BEST_LOGIT_OUTPUT });
    const at = node('ArgMax', [x], fresh('argmax'), [{ name: 'axis', type: 2, i: -1 }, { name: 'keepdims', type: 2, i: 1 }]);
    node('Cast', [at], BEST_ID_OUTPUT, toFloat);
  } else {
    // Each row viewed as [blocks, size]: a reduction within every block, then one over the
    // blocks. onnxruntime's WebGPU reductions give each output one workgroup, so one reduction
    // over a whole row leaves all of a 151,936-wide row to a single workgroup. Padding, if any, is −∞.
    const { size, blocks, pad } = blocking(vocab);
    const padded = pad ? node('Pad', [x, int64s('pads', [0, 0, 0, 0, 0, pad]), floats('pad_value', Float32Array.of(-Infinity), [])], fresh('padded')) : x;
    const x4 = reshape(padded, [0, 0, blocks, size]);
    const max = reduce('ReduceMax', reduce('ReduceMax', x4, { keep: false }), { output: BEST_LOGIT_OUTPUT });
    // The least id at the maximum: each block's least offset there (∞ where none) plus the block's first id, least over the blocks.
    const offsets = floats('offsets', Float32Array.from({ length: size }, (_, i) => i), [size]);
    const starts = floats('block_starts', Float32Array.from({ length: blocks }, (_, b) => b * size), [blocks]);
    const none = floats('no_id', Float32Array.of(Infinity), []);
    const atMax = node('Where', [node('Equal', [x4, reshape(max, [0, 0, 1, 1])], fresh('is_max')), offsets, none], fresh('offsets_at_max'));
    const ids = node('Add', [reduce('ReduceMin', atMax, { keep: false }), starts], fresh('ids_at_max'));
    reduce('ReduceMin', ids, { output: BEST_ID_OUTPUT });
  }
  graph.node = [...(graph.node ?? []), ...added];
  const shape = { dim: [dims[0] ?? { dim_param: 'batch_size' }, dims[1] ?? { dim_param: 'sequence_length' }, { dim_value: 1 }] };
  for (const name of [BEST_LOGIT_OUTPUT, BEST_ID_OUTPUT]) {
    graph.output = [...graph.output!, { name, type: { tensor_type: { elem_type: DataType.FLOAT, shape: structuredClone(shape) } } }];
  }
  return null;
}

/**
 * A row of `vocab` logits as `blocks` blocks of `size`: about 128 blocks (a GPU's worth of
 * workgroups, each with a short walk), by a divisor of the vocabulary where one is near, else
 * 128 blocks with `pad` more logits. A row below 8,192 stays one block: one workgroup walks it
 * quickly, and SwiftShader, where the tests run WebGPU, pays for every workgroup.
 */
export function blocking(vocab: number): { size: number; blocks: number; pad: number } {
  if (vocab < 8192) return { size: vocab, blocks: 1, pad: 0 };
  const far = (b: number) => Math.abs(Math.log(b / 128));
  let blocks = 0;
  for (let b = 32; b <= 512 && b <= vocab; b++) if (vocab % b === 0 && (blocks === 0 || far(b) < far(blocks))) blocks = b;
  if (blocks === 0) blocks = Math.min(128, vocab);
  const size = Math.ceil(vocab / blocks);
  return { size, blocks, pad: blocks * size - vocab };
}
