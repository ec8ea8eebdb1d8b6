// Weight formats of real exports, each with the kernel its exporter emits:
// fp32 MatMul; fp16 weights (Cast to float32 here, since the fixture computes in
// float32); MatMulNBits 4-bit blocks with float32 (q4) or float16 (q4f16)
// activations; dynamic 8-bit (DynamicQuantizeLinear + MatMulInteger, q8).
import { GraphBuilder, TensorType } from '../../src/onnx/graph.js';
import { toHalfs } from '../../src/onnx/half.js';

export type WeightFormat = 'fp32' | 'fp16' | 'q4' | 'q4f16' | 'q8';

/** MatMulNBits block size along K (real exports use 32; 16 fits the fixtures' small hidden sizes). */
export const Q4_BLOCK = 16;

const bytesOf = (a: ArrayBufferView) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

/** An embedding-like matrix stored as its format keeps it: float16 in fp16 and q4f16, else float32. */
export function storeMatrix(g: GraphBuilder, name: string, dims: [number, number], data: Float32Array, format: WeightFormat): string {
  if (format === 'fp16' || format === 'q4f16') return g.raw(name, dims, TensorType.FLOAT16, bytesOf(toHalfs(data)));
  return g.weight(name, dims, data);
}

export interface Q4Options {
  block?: number;
  /** 4: int8 activations and int8 dot products inside (what onnxruntime-genai's builder sets for the CPU). */
  accuracyLevel?: number;
}

/** x · W for W [K, N] (row-major) in the given format; float32 in and out. */
export function linear(g: GraphBuilder, x: string, name: string, [K, N]: [number, number], w: Float32Array, format: WeightFormat, out: string, q4: Q4Options = {}): string {
  switch (format) {
    case 'fp32':
      return g.node('MatMul', [x, g.weight(name, [K, N], w)], {}, out);
    case 'fp16': {
      const w16 = g.node('Cast', [g.raw(name, [K, N], TensorType.FLOAT16, bytesOf(toHalfs(w)))], { to: TensorType.FLOAT }, `${name}_f32`);
      return g.node('MatMul', [x, w16], {}, out);
    }
    case 'q4':
    case 'q4f16': {
      const half = format === 'q4f16';
      const block = q4.block ?? Q4_BLOCK;
      const { packed, scales, blocks } = quantizeNbits(w, K, N, block);
      const b = g.raw(`${name}_Q4`, [N, blocks, block / 2], TensorType.UINT8, packed);
      const s = half ? g.raw(`${name}_scales`, [N * blocks], TensorType.FLOAT16, bytesOf(toHalfs(scales))) : g.weight(`${name}_scales`, [N * blocks], scales);
      const a = half ? g.node('Cast', [x], { to: TensorType.FLOAT16 }, `${out}_in_f16`) : x;
      const y = g.contrib('MatMulNBits', [a, b, s], { K, N, bits: 4, block_size: block, ...(q4.accuracyLevel ? { accuracy_level: q4.accuracyLevel } : {}) }, half ? `${out}_f16` : out);
      return half ? g.node('Cast', [y], { to: TensorType.FLOAT }, out) : y;
    }
    case 'q8': {
      const { q, scale } = quantize8(w);
      const [xq, xs, xz] = g.nodeN('DynamicQuantizeLinear', [x], 3, {}, [`${out}_xq`, `${out}_xs`, `${out}_xz`]);
      const acc = g.node('MatMulInteger', [xq!, g.raw(`${name}_quantized`, [K, N], TensorType.UINT8, q), xz!, g.raw(`${name}_zero_point`, [], TensorType.UINT8, Uint8Array.of(128))], {}, `${out}_int`);
      const scaleBoth = g.node('Mul', [xs!, g.scalar(`${name}_scale`, scale)], {}, `${out}_scale`);
      return g.node('Mul', [g.node('Cast', [acc], { to: TensorType.FLOAT }, `${out}_acc`), scaleBoth], {}, out);
    }
  }
}

/**
 * 4-bit block quantization as onnxruntime's MatMul4BitsQuantizer writes it: W [K, N] (row-major,
 * y = x · W) in symmetric blocks of `block` along K per output column, zero point 8 (MatMulNBits'
 * default when none is given), two values a byte (low nibble first). `packed` is
 * [N, blocks, block / 2] bytes, `scales` [N, blocks].
 */
export function quantizeNbits(w: Float32Array, K: number, N: number, block: number): { packed: Uint8Array; scales: Float32Array; blocks: number } {
  const blocks = Math.ceil(K / block);
  const packed = new Uint8Array(N * blocks * (block / 2));
  const scales = new Float32Array(N * blocks);
  for (let n = 0; n < N; n++) {
    for (let b = 0; b < blocks; b++) {
      let max = 0;
      for (let k = b * block; k < Math.min(K, (b + 1) * block); k++) max = Math.max(max, Math.abs(w[k * N + n]!));
      const scale = max / 7 || 1;
      scales[n * blocks + b] = scale;
      for (let i = 0; i < block; i++) {
        const k = b * block + i;
        const q = k < K ? Math.max(0, Math.min(15, Math.round(w[k * N + n]! / scale) + 8)) : 8;
        packed[(n * blocks + b) * (block / 2) + (i >> 1)]! |= i & 1 ? q << 4 : q;
      }
    }
  }
  return { packed, scales, blocks };
}

/** Per-tensor 8-bit, zero point 128 (uint8), as dynamic quantization writes weights. */
function quantize8(w: Float32Array): { q: Uint8Array; scale: number } {
  let max = 0;
  for (const v of w) max = Math.max(max, Math.abs(v));
  const scale = max / 127 || 1;
  const q = new Uint8Array(w.length);
  for (let i = 0; i < w.length; i++) q[i] = Math.max(0, Math.min(255, Math.round(w[i]! / scale) + 128));
  return { q, scale };
}
