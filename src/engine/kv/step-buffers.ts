// Host decode steps write their present.* into buffers the batch owns, two sets taking turns:
// a step reads its past from one set while onnxruntime writes its presents into the other,
// given as pre-allocated outputs. Left to onnxruntime, every step's presents were new external
// ArrayBuffers (the whole cache, every step), and that garbage drove V8 to a major GC about
// every 17 steps, 11–16 ms each: about 0.5 ms a row at one stream on the 0.5B-shaped model.
//
// The spare set travels with the batch (BatchKv.spare), never with the model, so two loops on
// one model cannot write into each other's cache. Only arrays made here are reused: a batch
// from a repack or a prefill holds fresh arrays that may be referenced elsewhere.
import type { KvType } from '../../backends/kv.js';
import type { KvArray } from '../models/interface.js';
import type { BatchKv, KvShape } from './layout.js';

/** Positions a new buffer holds beyond the step that made it: a new pair every 64 steps. */
const HEADROOM = 64;

/**
 * float16 in the array type onnxruntime-common gives its outputs (Float16Array where the runtime
 * has it): a batch's arrays and a joining prefill's must be of one type, or copying one into
 * the other would convert values instead of moving bits.
 */
const Half = (globalThis as unknown as { Float16Array?: new (n: number) => KvArray }).Float16Array ?? Uint16Array;

/** The buffers made here, so that a batch's past is reused only when it is one of them. */
const made = new WeakSet<ArrayBufferLike>();

/**
 * Where a decode step of `rows` rows on a batch of width `width` writes its 2 × layers
 * presents ([rows, kv_heads, width + 1, head_dim] each): the batch's spare set where it has
 * room, else a new set with headroom.
 */
export function presentTargets(batch: BatchKv, rows: number, shape: KvShape, type: KvType): KvArray[] {
  const size = (width: number) => rows * shape.kvHeads * width * shape.headDim;
  const need = size(batch.width + 1);
  const spare = batch.spare;
  if (spare && spare.every((a) => a.length >= need)) return spare.map((a) => a.subarray(0, need));
  return Array.from({ length: 2 * shape.layers }, () => {
    const whole = new (type === 'float16' ? Half : Float32Array)(size(batch.width + 1 + HEADROOM));
    made.add(whole.buffer);
    return whole.subarray(0, need);
  });
}

/** The set behind a batch's past, whole, once a step has read it: the next step's spare (undefined where it was not made here). */
export function spareAfter(batch: BatchKv): KvArray[] | undefined {
  const past = batch.data;
  if (!past?.length || !past.every((a) => made.has(a.buffer))) return undefined;
  return past.map((a) => new (a.constructor as new (buffer: ArrayBufferLike) => KvArray)(a.buffer));
}
