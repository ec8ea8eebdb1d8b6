// A GGUF v3 writer (the file format of llama.cpp / ggml): typed metadata, tensor infos, then
// the tensors' data, each aligned. Tensor payloads in F32, F16 and ggml's Q8_0 and Q4_0 blocks.
import { closeSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { floatToHalf } from '../../src/onnx/half.js';

/** Metadata value types (gguf_type). */
export const GgufType = {
  UINT8: 0, INT8: 1, UINT16: 2, INT16: 3, UINT32: 4, INT32: 5, FLOAT32: 6, BOOL: 7, STRING: 8, ARRAY: 9, UINT64: 10, INT64: 11, FLOAT64: 12,
} as const;
type ScalarType = Exclude<(typeof GgufType)[keyof typeof GgufType], 9>;

export type GgufValue =
  | { type: ScalarType; value: number | bigint | boolean | string }
  | { type: typeof GgufType.ARRAY; of: ScalarType; values: readonly (number | bigint | boolean | string)[] };

export const gguf = {
  u32: (value: number): GgufValue => ({ type: GgufType.UINT32, value }),
  i32: (value: number): GgufValue => ({ type: GgufType.INT32, value }),
  f32: (value: number): GgufValue => ({ type: GgufType.FLOAT32, value }),
  bool: (value: boolean): GgufValue => ({ type: GgufType.BOOL, value }),
  str: (value: string): GgufValue => ({ type: GgufType.STRING, value }),
  array: (of: ScalarType, values: readonly (number | bigint | boolean | string)[]): GgufValue => ({ type: GgufType.ARRAY, of, values }),
};

/** Tensor element types (ggml_type) this writer emits. */
export const GgmlType = { F32: 0, F16: 1, Q4_0: 2, Q8_0: 8 } as const;
export type GgmlTypeName = keyof typeof GgmlType;

/** Elements per block and bytes per block of each type. */
const LAYOUT: Record<GgmlTypeName, { block: number; bytes: number }> = {
  F32: { block: 1, bytes: 4 },
  F16: { block: 1, bytes: 2 },
  Q8_0: { block: 32, bytes: 34 }, // fp16 d, then 32 int8
  Q4_0: { block: 32, bytes: 18 }, // fp16 d, then 16 bytes: element j in the low nibble of byte j, element j+16 in its high nibble
};

export interface GgufTensor {
  name: string;
  /** ggml's ne: the fastest-varying dimension first (a row-major [rows, cols] matrix is [cols, rows]). */
  ne: number[];
  type: GgmlTypeName;
  /** Elements in row-major order of the reversed ne (rows of ne[0] elements). */
  data: Float32Array;
}

export const GGUF_ALIGNMENT = 32;

/** The payload of one tensor in its type. Quantized rows (ne[0]) must be whole blocks. */
export function encodeTensor(type: GgmlTypeName, data: Float32Array, rowLength: number): Uint8Array {
  switch (type) {
    case 'F32':
      return new Uint8Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength));
    case 'F16': {
      const out = new Uint16Array(data.length);
      for (let i = 0; i < data.length; i++) out[i] = floatToHalf(data[i]!);
      return new Uint8Array(out.buffer);
    }
    case 'Q8_0':
    case 'Q4_0':
      if (rowLength % 32 !== 0) throw new Error(`${type} needs rows of whole 32-element blocks, not ${rowLength}`);
      return type === 'Q8_0' ? quantizeQ8_0(data) : quantizeQ4_0(data);
  }
}

function halfToFloat(h: number): number {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}
/** The float32 value of a float16 (scales are applied as stored). */
export const roundToHalf = (x: number) => halfToFloat(floatToHalf(x));

/** C's roundf: halves away from zero. */
const roundf = (x: number) => (x < 0 ? -Math.floor(-x + 0.5) : Math.floor(x + 0.5));

/** ggml's quantize_row_q8_0_ref: d = amax / 127, q = round(x / d). */
export function quantizeQ8_0(x: Float32Array): Uint8Array {
  const blocks = x.length / 32;
  const out = new Uint8Array(blocks * 34);
  const view = new DataView(out.buffer);
  for (let b = 0; b < blocks; b++) {
    let amax = 0;
    for (let j = 0; j < 32; j++) amax = Math.max(amax, Math.abs(x[b * 32 + j]!));
    const d = Math.fround(amax / 127);
    const id = d ? Math.fround(1 / d) : 0;
    view.setUint16(b * 34, floatToHalf(d), true);
    for (let j = 0; j < 32; j++) view.setInt8(b * 34 + 2 + j, roundf(Math.fround(x[b * 32 + j]! * id)));
  }
  return out;
}

/** ggml's quantize_row_q4_0_ref: d = (the value of largest magnitude) / −8, q = min(15, trunc(x / d + 8.5)). */
export function quantizeQ4_0(x: Float32Array): Uint8Array {
  const blocks = x.length / 32;
  const out = new Uint8Array(blocks * 18);
  const view = new DataView(out.buffer);
  for (let b = 0; b < blocks; b++) {
    let amax = 0;
    let max = 0;
    for (let j = 0; j < 32; j++) {
      const v = x[b * 32 + j]!;
      if (amax < Math.abs(v)) {
        amax = Math.abs(v);
        max = v;
      }
    }
    const d = Math.fround(max / -8);
    const id = d ? Math.fround(1 / d) : 0;
    view.setUint16(b * 18, floatToHalf(d), true);
    const q = (v: number) => Math.min(15, Math.trunc(Math.fround(Math.fround(v * id) + 8.5)));
    for (let j = 0; j < 16; j++) out[b * 18 + 2 + j] = q(x[b * 32 + j]!) | (q(x[b * 32 + 16 + j]!) << 4);
  }
  return out;
}

/** The values a Q8_0 or Q4_0 payload stands for (as ggml's dequantize_row_*). */
export function dequantize(type: 'Q8_0' | 'Q4_0', bytes: Uint8Array): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const size = LAYOUT[type].bytes;
  const blocks = bytes.length / size;
  const out = new Float32Array(blocks * 32);
  for (let b = 0; b < blocks; b++) {
    const d = halfToFloat(view.getUint16(b * size, true));
    for (let j = 0; j < (type === 'Q8_0' ? 32 : 16); j++) {
      if (type === 'Q8_0') out[b * 32 + j] = view.getInt8(b * size + 2 + j) * d;
      else {
        const byte = bytes[b * size + 2 + j]!;
        out[b * 32 + j] = ((byte & 0x0f) - 8) * d;
        out[b * 32 + 16 + j] = ((byte >> 4) - 8) * d;
      }
    }
  }
  return out;
}

/** Bytes of a tensor of `elements` elements in `type`. */
export function tensorBytes(type: GgmlTypeName, elements: number): number {
  return (elements / LAYOUT[type].block) * LAYOUT[type].bytes;
}

/** Appends little-endian values to a growing buffer. */
class Bytes {
  private buf = new Uint8Array(1 << 16);
  private view = new DataView(this.buf.buffer);
  length = 0;
  private room(n: number) {
    if (this.length + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.length + n));
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }
  u8(v: number) { this.room(1); this.view.setUint8(this.length, v); this.length += 1; }
  i8(v: number) { this.room(1); this.view.setInt8(this.length, v); this.length += 1; }
  u16(v: number) { this.room(2); this.view.setUint16(this.length, v, true); this.length += 2; }
  i16(v: number) { this.room(2); this.view.setInt16(this.length, v, true); this.length += 2; }
  u32(v: number) { this.room(4); this.view.setUint32(this.length, v, true); this.length += 4; }
  i32(v: number) { this.room(4); this.view.setInt32(this.length, v, true); this.length += 4; }
  f32(v: number) { this.room(4); this.view.setFloat32(this.length, v, true); this.length += 4; }
  f64(v: number) { this.room(8); this.view.setFloat64(this.length, v, true); this.length += 8; }
  u64(v: number | bigint) { this.room(8); this.view.setBigUint64(this.length, BigInt(v), true); this.length += 8; }
  i64(v: number | bigint) { this.room(8); this.view.setBigInt64(this.length, BigInt(v), true); this.length += 8; }
  str(s: string) {
    const b = new TextEncoder().encode(s);
    this.u64(b.length);
    this.room(b.length);
    this.buf.set(b, this.length);
    this.length += b.length;
  }
  pad(alignment: number) { while (this.length % alignment) this.u8(0); }
  bytes() { return this.buf.subarray(0, this.length); }
}

function scalar(out: Bytes, type: ScalarType, v: number | bigint | boolean | string): void {
  switch (type) {
    case GgufType.UINT8: return out.u8(Number(v));
    case GgufType.INT8: return out.i8(Number(v));
    case GgufType.UINT16: return out.u16(Number(v));
    case GgufType.INT16: return out.i16(Number(v));
    case GgufType.UINT32: return out.u32(Number(v));
    case GgufType.INT32: return out.i32(Number(v));
    case GgufType.FLOAT32: return out.f32(Number(v));
    case GgufType.BOOL: return out.u8(v ? 1 : 0);
    case GgufType.STRING: return out.str(String(v));
    case GgufType.UINT64: return out.u64(v as number | bigint);
    case GgufType.INT64: return out.i64(v as number | bigint);
    case GgufType.FLOAT64: return out.f64(Number(v));
  }
}

export interface GgufFile {
  metadata: [string, GgufValue][];
  tensors: GgufTensor[];
}

/**
 * Writes `file` to `path` (through a temporary name, so a half-written file never has the final
 * name). Tensors are encoded one at a time, so memory holds one tensor's payload beside the weights.
 */
export function writeGguf(path: string, file: GgufFile): void {
  const head = new Bytes();
  head.u32(0x46554747); // "GGUF"
  head.u32(3);
  head.u64(file.tensors.length);
  head.u64(file.metadata.length);
  for (const [key, value] of file.metadata) {
    head.str(key);
    head.u32(value.type);
    if (value.type === GgufType.ARRAY) {
      head.u32(value.of);
      head.u64(value.values.length);
      for (const v of value.values) scalar(head, value.of, v);
    } else scalar(head, value.type, value.value);
  }
  let offset = 0;
  const offsets: number[] = [];
  for (const t of file.tensors) {
    const elements = t.ne.reduce((a, b) => a * b, 1);
    if (elements !== t.data.length) throw new Error(`${t.name}: ne ${t.ne.join('×')} is not ${t.data.length} elements`);
    head.str(t.name);
    head.u32(t.ne.length);
    for (const n of t.ne) head.u64(n);
    head.u32(GgmlType[t.type]);
    head.u64(offset);
    offsets.push(offset);
    offset += tensorBytes(t.type, elements);
    offset = Math.ceil(offset / GGUF_ALIGNMENT) * GGUF_ALIGNMENT;
  }
  head.pad(GGUF_ALIGNMENT);
  const tmp = `${path}.tmp-${process.pid}`;
  const fd = openSync(tmp, 'w');
  try {
    const put = (b: Uint8Array) => {
      for (let done = 0; done < b.length; ) done += writeSync(fd, b, done, b.length - done);
    };
    put(head.bytes());
    let at = 0;
    const zeros = new Uint8Array(GGUF_ALIGNMENT);
    file.tensors.forEach((t, i) => {
      if (offsets[i]! > at) put(zeros.subarray(0, offsets[i]! - at));
      const payload = encodeTensor(t.type, t.data, t.ne[0]!);
      put(payload);
      at = offsets[i]! + payload.length;
    });
    if (offset > at) put(zeros.subarray(0, offset - at));
  } catch (e) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw e;
  }
  closeSync(fd);
  renameSync(tmp, path);
}
