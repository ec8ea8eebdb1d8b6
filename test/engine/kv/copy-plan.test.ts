// The KV copy plan both executors run (host TypedArray.set, WebGPU copyBufferToBuffer),
// checked on the host against the layout worked out element by element.
import { describe, expect, it } from 'vitest';
import { batchRow, gatherPlan, runOnHost, seqRow, splicePlan } from '../../../src/engine/kv/copy-plan.js';
import type { PaddingSide } from '../../../src/engine/models/interface.js';
import type { BatchKv, SeqKv } from '../../../src/engine/kv/layout.js';

const shape = { layers: 2, kvHeads: 3, headDim: 4 };
const T = shape.layers * 2;

/** Sequences packed into one padded batch by the plan, on the host. */
function packBatch(seqs: SeqKv[], padding: PaddingSide = 'left'): BatchKv {
  const plan = gatherPlan(shape, seqs.map((s, i) => seqRow(i, s.length)), padding);
  return { width: plan.width, pads: plan.pads, padding, data: runOnHost(plan, seqs.map((s) => s.data)) };
}

/** Row r of a host batch taken back out by the plan. */
function unpackRow(batch: BatchKv, r: number): SeqKv {
  const plan = gatherPlan(shape, [batchRow(0, batch, r)]);
  return { length: plan.width, data: runOnHost(plan, [batch.data!]) };
}

/** A sequence cache whose every entry says where it is: tensor t, head h, position p, dim d. */
function seq(id: number, length: number, Type: typeof Float32Array | typeof Uint16Array = Float32Array): SeqKv {
  const { kvHeads: H, headDim: D } = shape;
  const data = Array.from({ length: T }, (_, t) => {
    const a = new Type(H * length * D);
    for (let h = 0; h < H; h++) for (let p = 0; p < length; p++) for (let d = 0; d < D; d++) a[(h * length + p) * D + d] = 1 + id * 1000 + t * 100 + h * 20 + p * 4 + d;
    return a;
  });
  return { length, data };
}

/** The batch of `seqs` padded on `padding`'s side, entry by entry: [rows, H, width, D], zero in the padding. */
function expectedBatch(seqs: SeqKv[], padding: PaddingSide = 'left'): number[][] {
  const { kvHeads: H, headDim: D } = shape;
  const width = Math.max(...seqs.map((s) => s.length));
  return Array.from({ length: T }, (_, t) => {
    const out: number[] = [];
    seqs.forEach((s) => {
      for (let h = 0; h < H; h++) for (let p = 0; p < width; p++) for (let d = 0; d < D; d++) {
        const q = padding === 'left' ? p - (width - s.length) : p;
        out.push(q < 0 || q >= s.length ? 0 : s.data[t][(h * s.length + q) * D + d]);
      }
    });
    return out;
  });
}

describe('the KV copy plan', () => {
  it('packs sequences of different lengths left-padded with zeros', () => {
    const seqs = [seq(1, 5), seq(2, 2), seq(3, 7)];
    const batch = packBatch(seqs);
    expect(batch.width).toBe(7);
    expect(batch.pads).toEqual([2, 5, 0]);
    expect(batch.data!.map((a) => [...a])).toEqual(expectedBatch(seqs));
  });

  it('takes each row back out as the sequence that went in', () => {
    const seqs = [seq(1, 5), seq(2, 2), seq(3, 7)];
    const batch = packBatch(seqs);
    seqs.forEach((s, r) => {
      const row = unpackRow(batch, r);
      expect(row.length).toBe(s.length);
      expect(row.data.map((a) => [...a])).toEqual(s.data.map((a) => [...a]));
    });
  });

  it('repacks kept rows of a batch with joining sequences in one pass, as packing them afresh would', () => {
    const old = [seq(1, 5), seq(2, 2), seq(3, 7)];
    const batch = packBatch(old);
    const joining = [seq(4, 9), seq(5, 1)];
    // Row 1 leaves; rows 2 and 0 stay (in that order), then the two join.
    const plan = gatherPlan(shape, [batchRow(0, batch, 2), batchRow(0, batch, 0), seqRow(1, 9), seqRow(2, 1)]);
    const out = runOnHost(plan, [batch.data!, ...joining.map((s) => s.data)]);
    const fresh = [old[2], old[0], ...joining];
    expect(plan.width).toBe(9);
    expect(plan.pads).toEqual([2, 4, 0, 8]);
    expect(plan.dims).toEqual([4, shape.kvHeads, 9, shape.headDim]);
    expect(out.map((a) => [...a])).toEqual(expectedBatch(fresh));
  });

  it('copies whole runs: one range per padded (row, head), one per unpadded row', () => {
    const batch = packBatch([seq(1, 5), seq(2, 3)]);
    expect(gatherPlan(shape, [batchRow(0, batch, 1)]).ranges).toHaveLength(shape.kvHeads); // padded in the source
    expect(gatherPlan(shape, [batchRow(0, batch, 0)]).ranges).toEqual([{ source: 0, from: 0, to: 0, count: shape.kvHeads * 5 * shape.headDim }]);
  });

  it('packs sequences right-padded with zeros, each row a prefix, for GroupQueryAttention graphs', () => {
    const seqs = [seq(1, 5), seq(2, 2), seq(3, 7)];
    const batch = packBatch(seqs, 'right');
    expect(batch.pads).toEqual([2, 5, 0]);
    expect(batch.data!.map((a) => [...a])).toEqual(expectedBatch(seqs, 'right'));
  });

  it('takes each row of a right-padded batch back out as the sequence that went in', () => {
    const seqs = [seq(1, 5), seq(2, 2), seq(3, 7)];
    const batch = packBatch(seqs, 'right');
    seqs.forEach((s, r) => {
      const row = unpackRow(batch, r);
      expect(row.length).toBe(s.length);
      expect(row.data.map((a) => [...a])).toEqual(s.data.map((a) => [...a]));
    });
  });

  it('repacks kept rows of a right-padded batch with joining sequences, as packing them afresh would', () => {
    const old = [seq(1, 5), seq(2, 2), seq(3, 7)];
    const batch = packBatch(old, 'right');
    const joining = [seq(4, 9), seq(5, 1)];
    const plan = gatherPlan(shape, [batchRow(0, batch, 1), batchRow(0, batch, 0), seqRow(1, 9), seqRow(2, 1)], 'right');
    const out = runOnHost(plan, [batch.data!, ...joining.map((s) => s.data)]);
    expect(plan.pads).toEqual([7, 4, 0, 8]);
    expect(out.map((a) => [...a])).toEqual(expectedBatch([old[1], old[0], ...joining], 'right'));
  });

  it('keeps float16 caches in their own type', () => {
    const seqs = [seq(1, 3, Uint16Array), seq(2, 1, Uint16Array)];
    const batch = packBatch(seqs);
    expect(batch.data![0]).toBeInstanceOf(Uint16Array);
    expect(batch.data!.map((a) => [...a])).toEqual(expectedBatch(seqs));
  });

  it("splices a grouped prefill's row back into one sequence: its past, then its new tokens after their padding", () => {
    // Row 1 of a batch [past padded to 5 | new tokens padded to 4]: a past of 3 and 2 new tokens.
    const past = seq(1, 3);
    const fresh = seq(2, 2);
    const width = 9;
    const batch = packBatch([seq(0, 5), past]).data!.map((p, t) => {
      // Append the new-token region: row r's new tokens right-aligned in 4 positions.
      const { kvHeads: H, headDim: D } = shape;
      const out = new Float32Array(2 * H * width * D);
      for (let r = 0; r < 2; r++) for (let h = 0; h < H; h++) {
        out.set(p.subarray((r * H + h) * 5 * D, (r * H + h + 1) * 5 * D), (r * H + h) * width * D);
        if (r === 1) out.set(fresh.data[t].subarray(h * 2 * D, (h + 1) * 2 * D), ((r * H + h) * width + 7) * D);
      }
      return out;
    });
    const plan = splicePlan(shape, 1, width, [[2, 5], [7, 9]]);
    const got = runOnHost(plan, [batch]);
    expect(plan.width).toBe(5);
    expect(got.map((a) => Array.from(a))).toEqual(
      Array.from({ length: T }, (_, t) => {
        const { kvHeads: H, headDim: D } = shape;
        const out: number[] = [];
        for (let h = 0; h < H; h++) {
          out.push(...past.data[t].subarray(h * 3 * D, (h + 1) * 3 * D));
          out.push(...fresh.data[t].subarray(h * 2 * D, (h + 1) * 2 * D));
        }
        return out;
      }),
    );
  });
});
