// Every batch change of the KV cache (packing sequences into a batch, taking a row
// out, slicing a prefix) moves whole (row, head) runs: in the [rows, kv_heads, width,
// head_dim] layout a row's `length × head_dim` entries of one head are contiguous in
// both source and destination, whichever side the row is padded on. So each change is a list of contiguous range copies,
// worked out once here and run by either executor: the host one below (TypedArray.set)
// or a backend's device one (WebGPU: copyBufferToBuffer), which never reads the cache
// back to the CPU.

import type { CopyPlan, CopyRange, KvArray, KvShape, PaddingSide } from '../../backends/kv.js';
import { allocLike } from '../models/interface.js';

export type { CopyPlan, CopyRange };

/**
 * Where one sequence's entries sit in a source: row `row` of a [rows, kv_heads, width,
 * head_dim] tensor, positions `from` to `from + length`. A sequence's own cache is row 0
 * of width = its length.
 */
export interface RowRef {
  source: number;
  row: number;
  width: number;
  from: number;
  length: number;
}



/** A sequence cache as source `source`. */
export function seqRow(source: number, length: number): RowRef {
  return { source, row: 0, width: length, from: 0, length };
}

/** Row r of a batch (left-padded unless it says otherwise) as source `source`: its real entries only. */
export function batchRow(source: number, batch: { width: number; pads: number[]; padding?: PaddingSide }, r: number): RowRef {
  const from = batch.padding === 'right' ? 0 : batch.pads[r];
  return { source, row: r, width: batch.width, from, length: batch.width - batch.pads[r] };
}

/** The copies that gather `rows` (row i of the result from rows[i]) into one batch padded on `padding`'s side. */
export function gatherPlan(shape: KvShape, rows: RowRef[], padding: PaddingSide = 'left'): CopyPlan {
  const { kvHeads: H, headDim: D } = shape;
  const width = Math.max(0, ...rows.map((r) => r.length));
  const pads = rows.map((r) => width - r.length);
  const ranges: CopyRange[] = [];
  rows.forEach((ref, i) => {
    for (let h = 0; h < H; h++) {
      const range = {
        source: ref.source,
        from: ((ref.row * H + h) * ref.width + ref.from) * D,
        to: ((i * H + h) * width + (padding === 'left' ? pads[i] : 0)) * D,
        count: ref.length * D,
      };
      // Runs that continue each other on both sides (unpadded heads of a whole row) are one copy.
      const last = ranges.at(-1);
      if (last && last.source === range.source && last.from + last.count === range.from && last.to + last.count === range.to) {
        last.count += range.count;
      } else if (range.count > 0) ranges.push(range);
    }
  });
  return { dims: [rows.length, H, width, D], size: rows.length * H * width * D, width, pads, padding, ranges };
}

/**
 * Runs a plan on host arrays: `sources[s][t]` is tensor t (2 × layers of them) of source s.
 * Each output keeps its source's element type, zero where no range writes.
 */
export function runOnHost(plan: CopyPlan, sources: KvArray[][]): KvArray[] {
  return sources[0].map((like, t) => {
    const out = allocLike(like, plan.size);
    for (const r of plan.ranges) out.set(sources[r.source][t].subarray(r.from, r.from + r.count), r.to);
    return out;
  });
}

/**
 * One sequence cache made of several position ranges [from, to) of row `row` of a
 * [rows, kv_heads, width, head_dim] source, in order: a batched prefill's row is its
 * cached past, then its new tokens after their padding (left-padded), or its new tokens
 * before theirs (right-padded).
 */
export function splicePlan(shape: KvShape, row: number, width: number, ranges: [number, number][]): CopyPlan {
  const { kvHeads: H, headDim: D } = shape;
  const length = ranges.reduce((n, [from, to]) => n + to - from, 0);
  const copies: CopyRange[] = [];
  for (let h = 0; h < H; h++) {
    let to = h * length * D;
    for (const [from, end] of ranges) {
      if (end > from) copies.push({ source: 0, from: ((row * H + h) * width + from) * D, to, count: (end - from) * D });
      to += (end - from) * D;
    }
  }
  return { dims: [1, H, length, D], size: H * length * D, width: length, pads: [0], padding: 'left', ranges: copies };
}
