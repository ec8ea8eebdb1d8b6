// Prefill wants one row of logits per prompt, yet an export without num_logits_to_keep
// computes lm_head at every position: at a 151,936-token vocabulary that is most of a
// prefill's output, and its time. This edits such a graph at load: the hidden state fed to
// lm_head is first gathered at the positions a new input names for each batch row (one for
// a prompt, each verified one for a speculative step), so the logits come out [batch, n, vocab].
//
// lm_head is found by walking back from the `logits` output through what exports put after
// it (Cast, Identity, a bias Add, Gemma 2's soft cap Div/Tanh/Mul, Granite's scaling Div)
// to the matrix product whose weight is a constant (MatMul, possibly of a Transpose'd
// tied embedding; MatMulNBits; MatMulInteger after DynamicQuantizeLinear). Everything on
// that path works position by position, so running it on the gathered rows gives exactly
// those rows of the original logits. Anything else on the path (an If of a merged decoder,
// a Reshape, a second activation), a path value used elsewhere, or a graph that already
// has num_logits_to_keep leaves the graph alone.
import {
  type GraphProto,
  type ModelProto,
  type NodeProto,
  type TensorProto,
  type ValueInfoProto,
  DataType,
  decodeModelProto,
  encodeModelProto,
  freshNames,
  int64Number,
  opsetVersion,
} from '../../onnx/model-proto.js';

/**
 * The input the edit adds: int64 [batch, n], for each row the n positions, within this run's
 * new tokens (input_ids' sequence axis), whose logits come out: `logits` is then
 * [batch, n, vocab]. A prompt's run asks for its last position (n = 1); a speculative step
 * for every position it verifies. Positions are 0 … sequence_length − 1 (no negative ones:
 * on the CPU one out of range is an error, elsewhere it need not be).
 */
export const LOGITS_POSITION_INPUT = 'hearth_logits_position';
/** The name of the positions axis of the input and of `logits`. */
const PICKED_POSITIONS = 'hearth_positions';

/** Inputs by which an export already returns only the last positions' logits. */
const KEEP_INPUTS = ['num_logits_to_keep', 'logits_to_keep'];

const MS = 'com.microsoft';
/** Matrix products that can be lm_head: op → its domain. Input 0 is the activation. */
const HEADS: Record<string, string> = {
  MatMul: '',
  MatMulNBits: MS,
  FusedMatMul: MS,
  MatMulInteger: '',
  MatMulIntegerToFloat: MS,
  DynamicQuantizeMatMul: MS,
};
/** Element-wise ops allowed between lm_head and `logits` (each acts on every position alone). */
const ELEMENTWISE = new Set(['Identity', 'Cast', 'Add', 'Sub', 'Mul', 'Div', 'Tanh', 'Neg', 'Clip', 'Sigmoid', 'Softplus']);

/** Where the gather goes: `hidden`, [batch, seq, hidden], read by `readers` (the path's nodes) only through the edit. */
export interface LmHeadPath {
  hidden: string;
  /** The nodes from `hidden` to `logits` (lm_head among them), in graph order. */
  nodes: NodeProto[];
  head: NodeProto;
}

export type LogitsPickResult = { bytes: Uint8Array; path: LmHeadPath } | { skipped: string };

/**
 * The edited ONNX file (bytes of the .onnx only: external data files are referenced by
 * name and stay as they are), or why it was left alone.
 */
export function pickLogitsPosition(onnx: Uint8Array): LogitsPickResult {
  let model: ModelProto;
  try {
    model = decodeModelProto(onnx);
  } catch (e) {
    // onnxruntime then reads the file as it is, and says what is wrong with it if anything is.
    return { skipped: `the file could not be decoded (${(e as Error).message})` };
  }
  const found = pickLogitsPositionIn(model);
  if (typeof found === 'string') return { skipped: found };
  return { bytes: encodeModelProto(model), path: found };
}

/** The same edit on a decoded model (changed in place): its lm_head path, or why it was left alone. */
export function pickLogitsPositionIn(model: ModelProto): LmHeadPath | string {
  const found = findLmHeadPath(model);
  if (typeof found !== 'string') insertGather(model, found);
  return found;
}

/** The edit for createModelSession: the edited bytes, or null where the graph is left alone. */
export function logitsPositionEdit(onnx: Uint8Array): Uint8Array | null {
  const result = pickLogitsPosition(onnx);
  return 'bytes' in result ? result.bytes : null;
}

/** The lm_head path of a decoder's graph, or a sentence saying why it is not edited. */
export function findLmHeadPath(model: ModelProto): LmHeadPath | string {
  const graph = model.graph;
  if (!graph) return 'the file has no graph';
  const inputs = (graph.input ?? []).map((i) => i.name ?? '');
  const keep = KEEP_INPUTS.find((n) => inputs.includes(n));
  if (keep) return `the graph already has ${keep}`;
  if (inputs.includes(LOGITS_POSITION_INPUT)) return `the graph already has ${LOGITS_POSITION_INPUT}`;
  if (!(graph.output ?? []).some((o) => o.name === 'logits')) return 'the graph has no logits output';
  if (int64Number(model.ir_version) < 4) return `IR version ${int64Number(model.ir_version)} is below 4`;
  const opset = opsetVersion(model);
  if (opset < 11) return `opset ${opset} has no GatherElements (needs 11)`;

  const nodes = graph.node ?? [];
  const producer = new Map<string, NodeProto>();
  for (const n of nodes) for (const o of n.output ?? []) if (o) producer.set(o, n);
  const constant = constants(graph);

  const region = new Set<NodeProto>();
  const roots = new Set<string>();
  const heads: NodeProto[] = [];
  let why: string | undefined;
  const fail = (reason: string) => {
    why ??= reason;
  };

  /** The hidden state a head reads: its input, or the input of the DynamicQuantizeLinear that quantized it. */
  const headRoot = (head: NodeProto): void => {
    const ins = head.input ?? [];
    const a = ins[0] ?? '';
    if (constant.has(a)) return fail(`${describe(head)} reads a constant as its activation`);
    const quantizer = producer.get(a);
    if (quantizer?.op_type === 'DynamicQuantizeLinear' && !quantizer.domain) {
      // Its scale and zero point come from the same quantizer; all else is the weight's.
      for (const x of ins) if (!constant.has(x) && !(quantizer.output ?? []).includes(x)) return fail(`${describe(head)} reads ${x}, neither a weight nor its quantizer's`);
      region.add(quantizer);
      roots.add(quantizer.input?.[0] ?? '');
      return;
    }
    for (const x of ins.slice(1)) if (!constant.has(x)) return fail(`${describe(head)} reads ${x}, which is not a weight`);
    roots.add(a);
  };

  const seen = new Set<string>();
  const walk = (tensor: string): void => {
    if (why || seen.has(tensor) || constant.has(tensor)) return;
    seen.add(tensor);
    const n = producer.get(tensor);
    if (!n) return fail(`logits depend on the graph input ${tensor} other than through lm_head`);
    if (region.has(n)) return;
    const op = n.op_type ?? '';
    if (op in HEADS && (n.domain ?? '') === HEADS[op]) {
      region.add(n);
      heads.push(n);
      return headRoot(n);
    }
    if (op === 'DynamicQuantizeLinear' && !n.domain) {
      // A quantizer's scale reached from an element-wise Mul after MatMulInteger.
      region.add(n);
      roots.add(n.input?.[0] ?? '');
      return;
    }
    if (!ELEMENTWISE.has(op) || n.domain) return fail(`${describe(n)} between lm_head and logits is not an element-wise op`);
    region.add(n);
    for (const x of n.input ?? []) walk(x);
  };
  walk('logits');
  if (why) return why;
  if (!heads.length) return 'no matrix product with a constant weight produces logits';
  if (roots.size !== 1) return `lm_head's path reads ${roots.size} hidden states (${[...roots].join(', ')})`;
  const hidden = [...roots][0]!;

  // Rows of the path's values change length: no one else may read them.
  const outputs = new Set((graph.output ?? []).map((o) => o.name));
  const usedInSubgraphs = subgraphInputs(nodes);
  for (const n of nodes) {
    if (region.has(n)) continue;
    for (const x of n.input ?? []) {
      const p = producer.get(x);
      if (p && region.has(p)) return `${x} on lm_head's path is also read by ${describe(n)}`;
    }
  }
  for (const n of region) {
    for (const o of n.output ?? []) {
      if (o && o !== 'logits' && outputs.has(o)) return `${o} on lm_head's path is also a graph output`;
      if (o && usedInSubgraphs.has(o)) return `${o} on lm_head's path is read inside a subgraph`;
    }
  }
  return { hidden, nodes: nodes.filter((n) => region.has(n)), head: heads[0]! };
}

/** Names whose values are constants: initializers (not overridable inputs), Constant outputs, and what only they feed. */
function constants(graph: GraphProto): Set<string> {
  const inputs = new Set((graph.input ?? []).map((i) => i.name));
  const c = new Set<string>(['']); // an optional input left out
  for (const t of graph.initializer ?? []) if (t.name && !inputs.has(t.name)) c.add(t.name);
  for (const t of (graph.sparse_initializer ?? []) as { values?: TensorProto }[]) if (t.values?.name && !inputs.has(t.values.name)) c.add(t.values.name);
  // Nodes are in topological order (ONNX requires it); a second pass catches any that are not.
  for (let pass = 0, grew = true; grew && pass < 8; pass++) {
    grew = false;
    for (const n of graph.node ?? []) {
      const outs = n.output ?? [];
      if (outs.every((o) => c.has(o))) continue;
      const ins = n.input ?? [];
      const isConst = n.op_type === 'Constant' ? !n.domain : ins.length > 0 && ins.every((x) => c.has(x)) && !hasSubgraph(n);
      if (!isConst) continue;
      for (const o of outs) c.add(o);
      grew = true;
    }
  }
  return c;
}

function hasSubgraph(n: NodeProto): boolean {
  return (n.attribute ?? []).some((a) => a.g || a.graphs?.length);
}

/** Every name a subgraph (If/Loop/Scan body) reads, outer-scope values among them. */
function subgraphInputs(nodes: NodeProto[], into = new Set<string>()): Set<string> {
  for (const n of nodes) {
    for (const a of n.attribute ?? []) {
      for (const g of [a.g, ...(a.graphs ?? [])]) {
        if (!g) continue;
        for (const m of g.node ?? []) for (const x of m.input ?? []) into.add(x);
        subgraphInputs(g.node ?? [], into);
      }
    }
  }
  return into;
}

function describe(n: NodeProto): string {
  return `${n.domain ? `${n.domain}.` : ''}${n.op_type} node ${n.name ?? '(unnamed)'}`;
}

/**
 * Inserts, right before the path's first node, the rows of `hidden` [batch, seq, hidden] at
 * (row b, positions p_b,j): the hidden state flattened to [batch·seq, hidden] and gathered at
 * the [batch, n] indices b·seq + p_b,j, which gives [batch, n, hidden]; the path then reads that. Gather, not
 * GatherElements: onnxruntime-web's WebGPU (JSEP) GatherElements has no float16 kernel, so
 * a q4f16 graph's gather would fall back to the CPU; Gather has one there and in the native
 * WebGPU provider, and Reshape moves no data. The index arithmetic (Shape, Slice, Concat,
 * Range, Mul, Add on int64) is a few numbers, on the CPU where a provider lacks it. All in
 * opset 11.
 */
function insertGather(model: ModelProto, path: LmHeadPath): void {
  const graph = model.graph!;
  const fresh = freshNames(graph, 'hearth_logits_pick');
  const int64s = (base: string, values: number[], dims: number[] = [values.length]): string => {
    const name = fresh(base);
    const raw = new Uint8Array(values.length * 8);
    const view = new DataView(raw.buffer);
    values.forEach((v, i) => view.setBigInt64(i * 8, BigInt(v), true));
    graph.initializer = [...(graph.initializer ?? []), { name, dims, data_type: DataType.INT64, raw_data: raw }];
    return name;
  };
  const added: NodeProto[] = [];
  const node = (op: string, input: string[], base: string, attribute: NodeProto['attribute'] = []): string => {
    const output = fresh(base);
    added.push({ op_type: op, name: fresh(`${op}`), input, output: [output], attribute });
    return output;
  };
  const axis = (i: number) => [{ name: 'axis', type: 2, i }];

  const { hidden } = path;
  const shape = node('Shape', [hidden], 'hidden_shape');
  const dim = (i: number, name: string) => node('Slice', [shape, int64s(`${name}_start`, [i]), int64s(`${name}_end`, [i + 1])], name);
  const [batch, seq, width] = [dim(0, 'batch'), dim(1, 'sequence'), dim(2, 'hidden_size')];
  const flat = node('Reshape', [hidden, node('Concat', [int64s('minus_one', [-1]), width], 'flat_shape', axis(0))], 'hidden_flat');
  const rows = node('Range', [int64s('zero', [0], []), node('Reshape', [batch, int64s('scalar', [], [0])], 'batch_scalar'), int64s('one', [1], [])], 'rows');
  const starts = node('Reshape', [node('Mul', [rows, seq], 'row_starts'), int64s('column', [-1, 1])], 'row_starts_column');
  const index = node('Add', [starts, LOGITS_POSITION_INPUT], 'flat_index');
  const picked = node('Gather', [flat, index], 'hidden_picked', axis(0));

  const onPath = new Set(path.nodes);
  for (const n of path.nodes) n.input = (n.input ?? []).map((x) => (x === hidden ? picked : x));
  const all = graph.node ?? [];
  const first = all.findIndex((n) => onPath.has(n));
  graph.node = [...all.slice(0, first), ...added, ...all.slice(first)];

  const logits = (graph.output ?? []).find((o) => o.name === 'logits')!;
  const batchDim = logits.type?.tensor_type?.shape?.dim?.[0];
  graph.input = [...(graph.input ?? []), int64Input(LOGITS_POSITION_INPUT, batchDim?.dim_param || 'batch_size')];
  const dims = logits.type?.tensor_type?.shape?.dim;
  if (dims && dims.length >= 2) dims[1] = { dim_param: PICKED_POSITIONS };
  // Shapes recorded for the path's values had a sequence axis; the gather changed it.
  const changed = new Set(path.nodes.flatMap((n) => n.output ?? []));
  graph.value_info = (graph.value_info ?? []).filter((v) => !changed.has(v.name ?? ''));
}

function int64Input(name: string, batch: string): ValueInfoProto {
  return { name, type: { tensor_type: { elem_type: DataType.INT64, shape: { dim: [{ dim_param: batch }, { dim_param: PICKED_POSITIONS }] } } } };
}
