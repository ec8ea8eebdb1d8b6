// KV caches in the transformers.js layout: per layer a key and a value tensor of
// shape [batch, kv_heads, length, head_dim]. A batch of sequences with different
// lengths is padded on the side the graph needs (PaddingSide): on the left for plain
// attention, row r's real entries at the right end and the attention mask hiding the
// padding; on the right for GroupQueryAttention, each row a prefix. Arrays keep the
// model's own element type (float32, or float16 held as Uint16Array): copies never widen them.

import type { KvArray, KvShape, PaddingSide } from '../../backends/kv.js';
import type { Tensor } from '../../backends/types.js';
import { gatherPlan, runOnHost, seqRow } from './copy-plan.js';

export type { KvShape };

/** One sequence's cache on the host: 2 × layers arrays (key, value per layer) of [kv_heads, length, head_dim]. */
export interface SeqKv {
  length: number;
  data: KvArray[];
}

/** One sequence's cache on WebGPU: its 2 × layers tensors left in GPU buffers (a prefill's present.*). */
export interface DeviceSeqKv {
  length: number;
  device: Tensor[];
}

/** A sequence's own cache between its prefill and joining the batch: wherever the model left it. */
export type SeqCache = SeqKv | DeviceSeqKv;

export const isOnDevice = (kv: SeqCache): kv is DeviceSeqKv => 'device' in kv;

/**
 * A padded batch: 2 × layers arrays of [rows, kv_heads, width, head_dim], row r holding
 * width − pads[r] entries (after its padding, or before it where `padding` is 'right'). On WebGPU
 * the cache stays in GPU buffers (`device`, onnxruntime tensors fed back as the next
 * step's past, and repacked on the GPU when the batch changes); `data` is then null.
 */
export interface BatchKv {
  width: number;
  pads: number[];
  /** Absent: 'left'. */
  padding?: PaddingSide;
  data: KvArray[] | null;
  device?: Tensor[];
}

export function seqKvBytes(kv: SeqKv): number {
  return kv.data.reduce((n, a) => n + a.byteLength, 0);
}

/** The first `length` positions of a sequence cache. */
export function slicePrefix(shape: KvShape, kv: SeqKv, length: number): SeqKv {
  if (length === kv.length) return kv;
  const plan = gatherPlan(shape, [{ ...seqRow(0, kv.length), length }]);
  return { length, data: runOnHost(plan, [kv.data]) };
}
