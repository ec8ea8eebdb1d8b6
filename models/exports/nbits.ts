// 4-bit block quantization as onnxruntime's MatMul4BitsQuantizer writes it for the model
// builder's int4 exports: symmetric blocks along K, zero point 8 (MatMulNBits' default when
// none is given), two values a byte (low nibble first).

export interface Nbits {
  /** [N, blocks, block / 2] bytes. */
  packed: Uint8Array;
  /** [N, blocks] scales. */
  scales: Float32Array;
  blocks: number;
}

/** W [K, N] (row-major, y = x · W) quantized per output column in blocks of `block` along K. */
export function quantizeNbits(w: Float32Array, K: number, N: number, block: number): Nbits {
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
