// KV caches in the transformers.js layout: per layer a key and a value tensor of
// shape [batch, kv_heads, length, head_dim]. A batch of sequences with different
// lengths is left-padded: row r's real entries sit at the right end, and the
// attention mask hides the padding. Arrays keep the model's own element type
// (float32, or float16 held as Uint16Array): copies never widen them.

import type { Tensor } from '../../backends/types.js';
import { allocLike, type KvArray } from '../models/interface.js';

export interface KvShape {
  layers: number;
  kvHeads: number;
  headDim: number;
}

/** One sequence's cache: 2 × layers arrays (key, value per layer) of [kv_heads, length, head_dim]. */
export interface SeqKv {
  length: number;
  data: KvArray[];
}

/**
 * A left-padded batch: 2 × layers arrays of [rows, kv_heads, width, head_dim]. On WebGPU
 * the cache stays in GPU buffers (`device`, onnxruntime tensors fed back as the next
 * step's past) while the batch is unchanged; `data` is then null until the model
 * downloads it (CausalLM.toHost), which only joining, leaving and the prefix cache need.
 */
export interface BatchKv {
  width: number;
  pads: number[];
  data: KvArray[] | null;
  device?: Tensor[];
}

export function seqKvBytes(kv: SeqKv): number {
  return kv.data.reduce((n, a) => n + a.byteLength, 0);
}

/** Packs sequences into one left-padded batch of the smallest width that holds them. */
export function packBatch(shape: KvShape, seqs: SeqKv[]): BatchKv {
  const width = Math.max(0, ...seqs.map((s) => s.length));
  const { kvHeads: H, headDim: D } = shape;
  const pads = seqs.map((s) => width - s.length);
  const data = Array.from({ length: shape.layers * 2 }, (_, t) => {
    const out = allocLike(seqs[0].data[t], seqs.length * H * width * D);
    seqs.forEach((s, r) => {
      const src = s.data[t];
      for (let h = 0; h < H; h++) {
        out.set(src.subarray(h * s.length * D, (h + 1) * s.length * D), ((r * H + h) * width + pads[r]) * D);
      }
    });
    return out;
  });
  return { width, pads, data };
}

/** Copies row r of a batch back out as a sequence cache (its real entries only). */
export function unpackRow(shape: KvShape, batch: BatchKv, r: number): SeqKv {
  if (!batch.data) throw new Error('unpackRow: the batch cache is still on the device (CausalLM.toHost first)');
  return gatherRow(shape, batch.data, batch.width, r, [[batch.pads[r], batch.width]]);
}

/**
 * Row r of a batch cache [rows, kv_heads, width, head_dim] as a sequence cache made of the
 * position ranges [from, to) given, in order: one range for a left-padded row, two for a
 * row of a batched prefill (its cached past, then its new tokens after their padding).
 */
export function gatherRow(shape: KvShape, data: KvArray[], width: number, r: number, ranges: [number, number][]): SeqKv {
  const { kvHeads: H, headDim: D } = shape;
  const length = ranges.reduce((n, [from, to]) => n + to - from, 0);
  const out = data.map((src) => {
    const dst = allocLike(src, H * length * D);
    for (let h = 0; h < H; h++) {
      let at = h * length * D;
      for (const [from, to] of ranges) {
        const start = ((r * H + h) * width + from) * D;
        dst.set(src.subarray(start, start + (to - from) * D), at);
        at += (to - from) * D;
      }
    }
    return dst;
  });
  return { length, data: out };
}

/** The first `length` positions of a sequence cache. */
export function slicePrefix(shape: KvShape, kv: SeqKv, length: number): SeqKv {
  if (length === kv.length) return kv;
  const { kvHeads: H, headDim: D } = shape;
  const data = kv.data.map((src) => {
    const out = allocLike(src, H * length * D);
    for (let h = 0; h < H; h++) out.set(src.subarray(h * kv.length * D, (h * kv.length + length) * D), h * length * D);
    return out;
  });
  return { length, data };
}
