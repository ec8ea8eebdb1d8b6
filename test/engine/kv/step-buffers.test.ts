// Host decode steps write their presents into the batch's own buffers, two sets taking turns,
// instead of new onnxruntime outputs every step: the logits and the cache are bit for bit what
// onnxruntime's own outputs give, for a GroupQueryAttention graph with a float16 cache (rows
// padded on the right) and a plain-attention float32 one (on the left), across a new pair of
// buffers (past the headroom), a row leaving and a row joining; and a step allocates no cache of
// its own.
import { beforeAll, describe, expect, it } from 'vitest';
import { nodeBackend } from '../../../src/backends/node.js';
import type { BatchKv, SeqCache } from '../../../src/engine/kv/layout.js';
import { CausalLM } from '../../../src/engine/models/causal-lm.js';
import { wholeRow } from '../../../src/engine/models/logits-head.js';
import { exportEntry, exportFixtures } from '../../helpers/exports.js';

const CASES: [string, string, string][] = [
  ['a GroupQueryAttention graph with a float16 cache', 'llama3_2-fused-export', 'q4f16'],
  ['a plain-attention graph with a float32 cache', 'llama3-export', 'fp32'],
];
const STEPS = 70; // past the 64 positions of headroom: a new pair of buffers on the way

const argmax = (a: Float32Array) => a.reduce((best, v, i) => (v > a[best]! ? i : best), 0);
/** The first index where two arrays differ, or -1. */
const firstDifference = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  if (a.length !== b.length) return 0;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return i;
  return -1;
};
/** A batch's real entries, row by row (its padding left out: nothing reads it, and a reused buffer holds older entries there). */
function realEntries(batch: BatchKv, t: number, kvHeads: number, headDim: number): number[] {
  const out: number[] = [];
  const data = batch.data![t]!; // float16: Float16Array on both sides where the runtime has it, else Uint16Array
  batch.pads.forEach((pad, r) => {
    const [from, to] = batch.padding === 'right' ? [0, batch.width - pad] : [pad, batch.width];
    for (let h = 0; h < kvHeads; h++) {
      const at = ((r * kvHeads + h) * batch.width) * headDim;
      out.push(...data.subarray(at + from * headDim, at + to * headDim));
    }
  });
  return out;
}
const prompts = [[5, 17, 300, 41], [9, 8], [77, 600, 12, 13, 14, 15, 16]];

/** Prefills the prompts, batches them, and decodes greedily; what each step gave, and the batch's arrays. */
async function decodeRun(lm: CausalLM, dropAfter: number) {
  const firsts: SeqCache[] = [];
  let next: number[] = [];
  for (const p of prompts) {
    const out = await lm.prefill(p, null);
    next.push(argmax(await wholeRow(out.logits)));
    out.logits.step.dispose();
    firsts.push(out.kv);
  }
  let batch = (await lm.repack(null, [], firsts))!;
  const logits: Float32Array[][] = [];
  const buffers: ArrayBufferLike[] = [];
  for (let s = 0; s < STEPS; s++) {
    const step = await lm.decode(next, batch);
    const rows = await Promise.all(next.map((_, r) => wholeRow({ step: step.logits, index: r })));
    step.logits.dispose();
    logits.push(rows);
    batch = step.kv;
    buffers.push(batch.data![0]!.buffer);
    next = rows.map(argmax);
    // A row leaves midway, and later one joins (its prefill's arrays copied in beside the batch's): the batch is repacked (fresh arrays) and the turns start again.
    if (s === dropAfter) {
      batch = (await lm.repack(batch, [0, 2], []))!;
      next = [next[0]!, next[2]!];
    }
    if (s === dropAfter + 10) {
      const joining = await lm.prefill([33, 34, 35], null);
      next.push(argmax(await wholeRow(joining.logits)));
      joining.logits.step.dispose();
      batch = (await lm.repack(batch, [0, 1], [joining.kv]))!;
    }
  }
  return { logits, buffers, last: batch as BatchKv };
}

describe.each(CASES)('host decode into the batch’s own buffers, on %s', (_, name, dtype) => {
  let given: CausalLM;
  let allocated: CausalLM;

  beforeAll(async () => {
    const dir = await exportFixtures();
    const entry = exportEntry(dir, name, dtype);
    const backend = nodeBackend('cpu', { threads: 1 });
    given = await CausalLM.load(backend, entry.source, entry);
    allocated = await CausalLM.load({ ...backend, fillsGivenOutputs: false }, entry.source, entry);
  }, 120_000);

  it("gives onnxruntime's own outputs' logits and cache, bit for bit, over 70 steps, a row leaving and a row joining", async () => {
    const mine = await decodeRun(given, 20);
    const theirs = await decodeRun(allocated, 20);
    for (let s = 0; s < STEPS; s++) for (const [r, row] of theirs.logits[s]!.entries()) expect(firstDifference(mine.logits[s]![r]!, row), `step ${s} row ${r}`).toBe(-1);
    expect([mine.last.width, mine.last.pads]).toEqual([theirs.last.width, theirs.last.pads]);
    const { kvHeads, headDim } = given.kvShape;
    for (let t = 0; t < theirs.last.data!.length; t++) {
      expect(firstDifference(realEntries(mine.last, t, kvHeads, headDim), realEntries(theirs.last, t, kvHeads, headDim)), `tensor ${t}`).toBe(-1);
    }
  }, 300_000);

  it('writes each step into one of two buffers, a new pair only past the headroom or after a batch change', async () => {
    const { buffers } = await decodeRun(given, 20);
    // Steps two apart share a buffer, bar the turns after the repack and the new pair past the headroom.
    const reused = buffers.filter((b, s) => s >= 2 && buffers[s - 2] === b).length;
    expect(reused).toBeGreaterThanOrEqual(STEPS - 12);
    expect(new Set(buffers).size).toBeLessThanOrEqual(9);
    // onnxruntime's own outputs: a new buffer every step.
    expect(new Set((await decodeRun(allocated, 20)).buffers).size).toBe(STEPS);
  }, 300_000);
});
