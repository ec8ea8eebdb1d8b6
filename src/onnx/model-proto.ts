// Reading and rewriting real ONNX files: ModelProto decoded and encoded by protobufjs from
// the full ONNX schema (onnx-schema.ts), so a graph edited at load (logits-pick.ts) keeps
// everything the export wrote. No file system here: it takes and gives bytes, in Node and
// in the browser alike. Weights a model keeps in external data files stay there; only
// their references (TensorProto.external_data) pass through.
//
// Bytes fields (raw_data of the initializers) decode as views into the input, not copies,
// so decoding a file with its weights inside costs little beyond the input; encoding
// writes one new buffer of the file's size.
import protobuf from 'protobufjs/light.js';
import { ONNX_SCHEMA } from './onnx-schema.js';

/** int64 fields: protobufjs gives long.js Longs (exact); a plain number is accepted when writing. */
export type Int64 = number | protobuf.Long;

export interface StringStringEntryProto {
  key?: string;
  value?: string;
}

export interface OperatorSetIdProto {
  domain?: string;
  version?: Int64;
}

export interface TensorProto {
  dims?: Int64[];
  data_type?: number;
  float_data?: number[];
  int32_data?: number[];
  int64_data?: Int64[];
  name?: string;
  raw_data?: Uint8Array;
  external_data?: StringStringEntryProto[];
  /** 1: the data is in an external file (external_data names it). */
  data_location?: number;
  [other: string]: unknown;
}

export interface AttributeProto {
  name?: string;
  type?: number;
  f?: number;
  i?: Int64;
  s?: Uint8Array;
  t?: TensorProto;
  g?: GraphProto;
  floats?: number[];
  ints?: Int64[];
  graphs?: GraphProto[];
  [other: string]: unknown;
}

export interface NodeProto {
  input?: string[];
  output?: string[];
  name?: string;
  op_type?: string;
  domain?: string;
  attribute?: AttributeProto[];
  [other: string]: unknown;
}

export interface DimensionProto {
  dim_value?: Int64;
  dim_param?: string;
  denotation?: string;
}

export interface TypeProto {
  tensor_type?: { elem_type?: number; shape?: { dim?: DimensionProto[] } };
  [other: string]: unknown;
}

export interface ValueInfoProto {
  name?: string;
  type?: TypeProto;
  doc_string?: string;
  [other: string]: unknown;
}

export interface GraphProto {
  node?: NodeProto[];
  name?: string;
  initializer?: TensorProto[];
  input?: ValueInfoProto[];
  output?: ValueInfoProto[];
  value_info?: ValueInfoProto[];
  [other: string]: unknown;
}

export interface ModelProto {
  ir_version?: Int64;
  opset_import?: OperatorSetIdProto[];
  producer_name?: string;
  producer_version?: string;
  graph?: GraphProto;
  functions?: { name?: string; domain?: string; [other: string]: unknown }[];
  [other: string]: unknown;
}

/** ONNX TensorProto.DataType values used when editing graphs. */
export const DataType = { FLOAT: 1, UINT8: 2, INT8: 3, INT32: 6, INT64: 7, BOOL: 9, FLOAT16: 10 } as const;

const root = protobuf.Root.fromJSON(ONNX_SCHEMA);
const Model = root.lookupType('onnx.ModelProto');

/**
 * Decodes an ONNX file's bytes. int64 fields need long.js (a dependency of protobufjs):
 * without it protobufjs turns them into doubles, which would change INT64_MAX (Slice ends)
 * on the way back, so that is refused rather than risked.
 */
export function decodeModelProto(bytes: Uint8Array): ModelProto {
  if (!protobuf.util.Long) throw new Error('protobufjs has no long.js here: int64 fields of the ONNX file cannot be kept exactly');
  return Model.decode(bytes) as unknown as ModelProto;
}

/** Encodes a ModelProto (decoded, edited, or built from plain objects) to an ONNX file's bytes. */
export function encodeModelProto(model: ModelProto): Uint8Array {
  return Model.encode(model as unknown as protobuf.Message).finish();
}

/** An int64 field as a number (exact up to 2^53, as shapes, versions and indices are). */
export function int64Number(v: Int64 | undefined): number {
  if (v === undefined || v === null) return 0;
  if (typeof v === 'number') return v;
  return (v.unsigned ? v.high >>> 0 : v.high) * 2 ** 32 + (v.low >>> 0);
}

/** The opset version the model imports for `domain` ('' and 'ai.onnx' are the default domain); 0 when it imports none. */
export function opsetVersion(model: ModelProto, domain = ''): number {
  const names = domain === '' || domain === 'ai.onnx' ? ['', 'ai.onnx'] : [domain];
  const entry = model.opset_import?.find((o) => names.includes(o.domain ?? ''));
  return entry ? int64Number(entry.version) : 0;
}

/**
 * Names for values an edit adds to `graph`: `prefix/base`, numbered where that is taken by a
 * node, value, input, output or initializer already there (or by an earlier fresh name).
 */
export function freshNames(graph: GraphProto, prefix: string): (base: string) => string {
  const taken = new Set<string>();
  for (const n of graph.node ?? []) for (const x of [...(n.input ?? []), ...(n.output ?? []), n.name ?? '']) taken.add(x);
  for (const v of [...(graph.input ?? []), ...(graph.output ?? []), ...(graph.initializer ?? [])]) taken.add(v.name ?? '');
  return (base) => {
    let name = `${prefix}/${base}`;
    for (let i = 1; taken.has(name); i++) name = `${prefix}/${base}_${i}`;
    taken.add(name);
    return name;
  };
}
