// The KV cache's vocabulary that the engine and the backends share: element types, the
// padding side, a model's KV shape, and copy plans (which the host runs with TypedArray.set
// and WebGPU with copyBufferToBuffer). It lives with the backends, below the engine, so
// that both import it and neither reaches up.

/** KV element types real exports use: fp32 exports, and fp16 / q4f16 ones. */
export type KvType = 'float32' | 'float16';

/**
 * Which side of a batch's rows holds the padding. 'left': a row's entries end at the batch's
 * width (transformers.js's layout; plain attention masks any slot). 'right': a row is a
 * prefix, its entries at [0, length): GroupQueryAttention reads row r's past as slots
 * [0, seqlens_k[r]) and writes the new token's key and value right after them.
 */
export type PaddingSide = 'left' | 'right';

/** A KV tensor's data in its own type (onnxruntime holds float16 as Uint16Array, or Float16Array where the runtime has it). */
export type KvArray = Float32Array | Uint16Array;

export interface KvShape {
  layers: number;
  kvHeads: number;
  headDim: number;
}

/** `count` elements from `from` in source `source` to `to` in the destination (offsets in elements). */
export interface CopyRange {
  source: number;
  from: number;
  to: number;
  count: number;
}

/**
 * A batch of the given rows, padded on one side, of the smallest width that holds them:
 * its [rows, kv_heads, width, head_dim] dims, element count, pads, and the copies that fill
 * it. Entries no range writes (the padding) must be zero, not garbage: the mask gives
 * them probability 0, and 0 × NaN would still poison attention.
 */
export interface CopyPlan {
  dims: [number, number, number, number];
  size: number;
  width: number;
  pads: number[];
  padding: PaddingSide;
  ranges: CopyRange[];
}
