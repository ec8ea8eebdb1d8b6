// A small graph builder: add nodes and initializers with readable names,
// then encode the model to bytes.
import {
  type AttributeValue,
  type Dim,
  type GraphData,
  type NodeData,
  type TensorData,
  type TensorTypeId,
  type ValueInfo,
  TensorType,
  concatChunks,
  encodeModel,
  floatTensor,
  int64Tensor,
} from './proto.js';

export type Attrs = Record<string, number | string | readonly number[] | { floats: readonly number[] } | { float: number } | { tensor: TensorData } | { graph: GraphData }>;

function toAttribute(v: Attrs[string]): AttributeValue {
  if (typeof v === 'number') return { kind: 'int', value: v };
  if (typeof v === 'string') return { kind: 'string', value: v };
  if (Array.isArray(v)) return { kind: 'ints', value: v as readonly number[] };
  if ('floats' in (v as object)) return { kind: 'floats', value: (v as { floats: readonly number[] }).floats };
  if ('float' in (v as object)) return { kind: 'float', value: (v as { float: number }).float };
  if ('graph' in (v as object)) return { kind: 'graph', value: (v as { graph: GraphData }).graph };
  return { kind: 'tensor', value: (v as { tensor: TensorData }).tensor };
}

export class GraphBuilder {
  private readonly nodes: NodeData[] = [];
  private readonly initializers: TensorData[] = [];
  private readonly inputs: ValueInfo[] = [];
  private readonly outputs: ValueInfo[] = [];
  private readonly names = new Set<string>();
  private counter = 0;

  constructor(readonly name: string) {}

  private unique(base: string): string {
    if (base === '') return base; // an optional input or output left out
    let name = base;
    while (this.names.has(name)) name = `${base}_${++this.counter}`;
    this.names.add(name);
    return name;
  }

  input(name: string, type: TensorTypeId, shape: readonly Dim[]): string {
    this.names.add(name);
    this.inputs.push({ name, type, shape });
    return name;
  }

  /** Declares a graph output; `value` is renamed to `name` with an Identity when it differs. */
  output(name: string, value: string, type: TensorTypeId, shape: readonly Dim[]): void {
    if (value !== name) this.node('Identity', [value], {}, name);
    this.outputs.push({ name, type, shape });
  }

  /** A float32 initializer. */
  weight(name: string, dims: readonly number[], data: Float32Array): string {
    if (data.length !== dims.reduce((a, b) => a * b, 1)) throw new Error(`size mismatch for ${name}`);
    const n = this.unique(name);
    this.initializers.push(floatTensor(n, dims, data));
    return n;
  }

  /** An initializer of any type from its little-endian bytes. */
  raw(name: string, dims: readonly number[], type: TensorTypeId, raw: Uint8Array): string {
    const n = this.unique(name);
    this.initializers.push({ name: n, dims, type, raw });
    return n;
  }

  /** An onnxruntime contrib operator (domain com.microsoft), e.g. MatMulNBits. */
  contrib(op: string, inputs: readonly string[], attrs: Attrs, outName: string): string {
    const out = this.node(op, inputs, attrs, outName);
    this.nodes[this.nodes.length - 1] = { ...this.nodes[this.nodes.length - 1]!, domain: 'com.microsoft' };
    return out;
  }

  /** A contrib operator with several outputs (GroupQueryAttention, SkipSimplifiedLayerNormalization); '' leaves an optional one out. */
  contribN(op: string, inputs: readonly string[], attrs: Attrs, outNames: readonly string[]): string[] {
    const outs = this.nodeN(op, inputs, outNames.length, attrs, outNames);
    this.nodes[this.nodes.length - 1] = { ...this.nodes[this.nodes.length - 1]!, domain: 'com.microsoft' };
    return outs;
  }

  /** An int64 constant (as an initializer). */
  ints(name: string, values: readonly number[], dims: readonly number[] = [values.length]): string {
    const n = this.unique(name);
    this.initializers.push(int64Tensor(n, dims, values));
    return n;
  }

  /** A float scalar (or 1-element) constant. */
  scalar(name: string, value: number): string {
    return this.weight(name, [], Float32Array.of(value));
  }

  /** Adds a node with one output and returns the output's name. */
  node(op: string, inputs: readonly string[], attrs: Attrs = {}, outName?: string): string {
    return this.nodeN(op, inputs, 1, attrs, outName ? [outName] : undefined)[0]!;
  }

  /** Adds a node with several outputs. */
  nodeN(op: string, inputs: readonly string[], count: number, attrs: Attrs = {}, outNames?: readonly string[]): string[] {
    const base = outNames?.[0] ?? `${op.toLowerCase()}`;
    const outputs = outNames ? outNames.map((n) => this.unique(n)) : Array.from({ length: count }, (_, i) => this.unique(i ? `${base}_o${i}` : base));
    const attributes: Record<string, AttributeValue> = {};
    for (const [k, v] of Object.entries(attrs)) attributes[k] = toAttribute(v);
    this.nodes.push({ opType: op, name: this.unique(`n_${outputs[0]}`), inputs, outputs, attributes });
    return outputs;
  }

  /** Names a value: a node's output under a readable name. */
  named(name: string): string {
    return this.unique(name);
  }

  graph(): GraphData {
    return { name: this.name, nodes: this.nodes, initializers: this.initializers, inputs: this.inputs, outputs: this.outputs };
  }

  toBytes(): Uint8Array {
    return concatChunks(encodeModel(this.graph()));
  }

  /**
   * The model with its larger initializers in external data files, as exporters write
   * models over 2 GB: `<file>_data`, then `<file>_data_1`, … when a chunk would pass
   * `chunkBytes` (a tensor is never split). Returns the files by name.
   */
  toExternalFiles(file: string, chunkBytes = Infinity): Record<string, Uint8Array> {
    const chunks: Uint8Array[][] = [[]];
    let used = 0;
    const initializers = this.initializers.map((t) => {
      if (t.raw.length < 1024) return t;
      if (used > 0 && used + t.raw.length > chunkBytes) {
        chunks.push([]);
        used = 0;
      }
      const index = chunks.length - 1;
      const location = `${file}_data${index === 0 ? '' : `_${index}`}`;
      chunks[index]!.push(t.raw);
      const offset = used;
      used += t.raw.length;
      return { ...t, external: { location, offset, length: t.raw.length } };
    });
    const files: Record<string, Uint8Array> = { [file]: concatChunks(encodeModel({ ...this.graph(), initializers })) };
    chunks.forEach((parts, i) => {
      if (parts.length) files[`${file}_data${i === 0 ? '' : `_${i}`}`] = concatChunks({ chunks: parts, length: parts.reduce((n, p) => n + p.length, 0) });
    });
    return files;
  }
}

export { TensorType };
