// A minimal protobuf writer for the ONNX messages the fixture builder needs
// (IR version 8, opset 17). Messages are built as lists of byte chunks so that
// large float initializers are never copied into one big string.

export type Chunk = Uint8Array;

/** An encoded message: its chunks and their total length. */
export interface Encoded {
  chunks: Chunk[];
  length: number;
}

export const TensorType = { FLOAT: 1, UINT8: 2, INT8: 3, INT32: 6, INT64: 7, BOOL: 9, FLOAT16: 10 } as const;
export type TensorTypeId = (typeof TensorType)[keyof typeof TensorType];

const AttrType = { FLOAT: 1, INT: 2, STRING: 3, TENSOR: 4, GRAPH: 5, FLOATS: 6, INTS: 7 } as const;

function varint(value: number | bigint): Uint8Array {
  let v = BigInt.asUintN(64, BigInt(value));
  const out: number[] = [];
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return Uint8Array.from(out);
}

const WIRE_VARINT = 0;
const WIRE_FIXED32 = 5;
const WIRE_LEN = 2;

/** Accumulates the fields of one message. */
export class MessageWriter {
  private readonly parts: Chunk[] = [];
  private size = 0;

  private push(chunk: Chunk): void {
    this.parts.push(chunk);
    this.size += chunk.length;
  }

  private tag(field: number, wire: number): void {
    this.push(varint((field << 3) | wire));
  }

  int(field: number, value: number | bigint): this {
    this.tag(field, WIRE_VARINT);
    this.push(varint(value));
    return this;
  }

  float(field: number, value: number): this {
    this.tag(field, WIRE_FIXED32);
    const b = new Uint8Array(4);
    new DataView(b.buffer).setFloat32(0, value, true);
    this.push(b);
    return this;
  }

  bytes(field: number, value: Uint8Array): this {
    this.tag(field, WIRE_LEN);
    this.push(varint(value.length));
    this.push(value);
    return this;
  }

  string(field: number, value: string): this {
    return this.bytes(field, new TextEncoder().encode(value));
  }

  message(field: number, value: Encoded): this {
    this.tag(field, WIRE_LEN);
    this.push(varint(value.length));
    for (const c of value.chunks) this.push(c);
    return this;
  }

  /** Packed repeated varints (int64 lists). */
  packedInts(field: number, values: readonly (number | bigint)[]): this {
    const encoded = values.map((v) => varint(v));
    const len = encoded.reduce((n, e) => n + e.length, 0);
    this.tag(field, WIRE_LEN);
    this.push(varint(len));
    for (const e of encoded) this.push(e);
    return this;
  }

  /** Packed repeated float32. */
  packedFloats(field: number, values: readonly number[]): this {
    const b = new Uint8Array(values.length * 4);
    const dv = new DataView(b.buffer);
    values.forEach((v, i) => dv.setFloat32(i * 4, v, true));
    return this.bytes(field, b);
  }

  done(): Encoded {
    return { chunks: this.parts, length: this.size };
  }
}

// ---- ONNX messages -------------------------------------------------------

export interface TensorData {
  name: string;
  dims: readonly number[];
  type: TensorTypeId;
  /** Little-endian raw bytes of the tensor. */
  raw: Uint8Array;
  /** Set when the bytes live in an external data file instead (raw is then written there). */
  external?: { location: string; offset: number; length: number };
}

export function floatTensor(name: string, dims: readonly number[], data: Float32Array): TensorData {
  const raw = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return { name, dims, type: TensorType.FLOAT, raw: littleEndianCopy(raw) };
}

export function int64Tensor(name: string, dims: readonly number[], data: readonly number[]): TensorData {
  const b = new Uint8Array(data.length * 8);
  const dv = new DataView(b.buffer);
  data.forEach((v, i) => dv.setBigInt64(i * 8, BigInt(v), true));
  return { name, dims, type: TensorType.INT64, raw: b };
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
function littleEndianCopy(raw: Uint8Array): Uint8Array {
  if (LITTLE_ENDIAN) return raw;
  const out = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i += 4) {
    out[i] = raw[i + 3]!;
    out[i + 1] = raw[i + 2]!;
    out[i + 2] = raw[i + 1]!;
    out[i + 3] = raw[i]!;
  }
  return out;
}

export function encodeTensor(t: TensorData): Encoded {
  const w = new MessageWriter();
  if (t.dims.length > 0) w.packedInts(1, t.dims);
  w.int(2, t.type);
  w.string(8, t.name);
  if (!t.external) return w.bytes(9, t.raw).done();
  const entry = (key: string, value: string) => new MessageWriter().string(1, key).string(2, value).done();
  w.message(13, entry('location', t.external.location));
  w.message(13, entry('offset', String(t.external.offset)));
  w.message(13, entry('length', String(t.external.length)));
  return w.int(14, 1).done(); // data_location: EXTERNAL
}

export type AttributeValue =
  | { kind: 'int'; value: number }
  | { kind: 'float'; value: number }
  | { kind: 'string'; value: string }
  | { kind: 'ints'; value: readonly number[] }
  | { kind: 'floats'; value: readonly number[] }
  | { kind: 'tensor'; value: TensorData }
  /** A subgraph (If's then_branch / else_branch): it may read values of the enclosing graph by name. */
  | { kind: 'graph'; value: GraphData };

export function encodeAttribute(name: string, a: AttributeValue): Encoded {
  const w = new MessageWriter().string(1, name);
  switch (a.kind) {
    case 'int':
      w.int(3, a.value).int(20, AttrType.INT);
      break;
    case 'float':
      w.float(2, a.value).int(20, AttrType.FLOAT);
      break;
    case 'string':
      w.string(4, a.value).int(20, AttrType.STRING);
      break;
    case 'ints':
      w.packedInts(8, a.value).int(20, AttrType.INTS);
      break;
    case 'floats':
      w.packedFloats(7, a.value).int(20, AttrType.FLOATS);
      break;
    case 'tensor':
      w.message(5, encodeTensor(a.value)).int(20, AttrType.TENSOR);
      break;
    case 'graph':
      w.message(6, encodeGraph(a.value)).int(20, AttrType.GRAPH);
      break;
  }
  return w.done();
}

export interface NodeData {
  opType: string;
  /** Operator set domain: '' (ONNX) or 'com.microsoft' (onnxruntime's contrib ops). */
  domain?: string;
  name: string;
  inputs: readonly string[];
  outputs: readonly string[];
  attributes: Readonly<Record<string, AttributeValue>>;
}

export function encodeNode(n: NodeData): Encoded {
  const w = new MessageWriter();
  for (const i of n.inputs) w.string(1, i);
  for (const o of n.outputs) w.string(2, o);
  w.string(3, n.name).string(4, n.opType);
  for (const [k, v] of Object.entries(n.attributes)) w.message(5, encodeAttribute(k, v));
  if (n.domain) w.string(7, n.domain);
  return w.done();
}

/** A dimension: a fixed size or a symbolic name (dim_param). */
export type Dim = number | string;

export interface ValueInfo {
  name: string;
  type: TensorTypeId;
  shape: readonly Dim[];
}

export function encodeValueInfo(v: ValueInfo): Encoded {
  const shape = new MessageWriter();
  for (const d of v.shape) {
    const dim = new MessageWriter();
    if (typeof d === 'number') dim.int(1, d);
    else dim.string(2, d);
    shape.message(1, dim.done());
  }
  const tensorType = new MessageWriter().int(1, v.type).message(2, shape.done()).done();
  const type = new MessageWriter().message(1, tensorType).done();
  return new MessageWriter().string(1, v.name).message(2, type).done();
}

export interface GraphData {
  name: string;
  nodes: readonly NodeData[];
  initializers: readonly TensorData[];
  inputs: readonly ValueInfo[];
  outputs: readonly ValueInfo[];
}

export function encodeGraph(g: GraphData): Encoded {
  const w = new MessageWriter();
  for (const n of g.nodes) w.message(1, encodeNode(n));
  w.string(2, g.name);
  for (const t of g.initializers) w.message(5, encodeTensor(t));
  for (const i of g.inputs) w.message(11, encodeValueInfo(i));
  for (const o of g.outputs) w.message(12, encodeValueInfo(o));
  return w.done();
}

export const IR_VERSION = 8;
export const OPSET = 17;

/** Encodes a ModelProto; returns the chunks to write (concatenate or stream). */
export function encodeModel(g: GraphData, producer = 'hearth-models'): Encoded {
  const opset = new MessageWriter().string(1, '').int(2, OPSET).done();
  const w = new MessageWriter()
    .int(1, IR_VERSION)
    .string(2, producer)
    .string(3, '0.1.0')
    .message(7, encodeGraph(g))
    .message(8, opset);
  if (g.nodes.some((n) => n.domain === 'com.microsoft')) w.message(8, new MessageWriter().string(1, 'com.microsoft').int(2, 1).done());
  return w.done();
}

export function concatChunks(e: Encoded): Uint8Array {
  const out = new Uint8Array(e.length);
  let off = 0;
  for (const c of e.chunks) {
    out.set(c, off);
    off += c.length;
  }
  return out;
}
