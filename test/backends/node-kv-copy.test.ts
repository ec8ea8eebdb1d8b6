// KV copy plans on onnxruntime-node's WebGPU provider (SwiftShader here), run as copy graphs:
// results stay in GPU buffers (which Node cannot read: they are checked through the host
// copy, the prefix cache's way), equal the host executor's, with zeros in the padding.
import { describe, expect, it } from 'vitest';
import { NODE_WEBGPU_SKIP } from '../helpers/node-webgpu.js';
import { nodeBackend } from '../../src/backends/node.js';
import { batchRow, gatherPlan, runOnHost, seqRow, splicePlan } from '../../src/engine/kv/copy-plan.js';
import type { CopyPlan, KvShape } from '../../src/backends/kv.js';
import type { Tensor } from '../../src/backends/types.js';

const shape: KvShape = { layers: 2, kvHeads: 2, headDim: 4 };
const T = 2 * shape.layers;
const backend = nodeBackend('webgpu');

/** A sequence cache of `length` positions, distinct values in each of its 2 × layers arrays. */
function seq(length: number, seed: number): Float32Array[] {
  const n = shape.kvHeads * length * shape.headDim;
  return Array.from({ length: T }, (_, t) => Float32Array.from({ length: n }, (_, i) => seed * 1000 + t * 100 + i + 1));
}

/** Host arrays moved onto the GPU by a copy of themselves. */
async function upload(arrays: Float32Array[], length: number): Promise<Tensor[]> {
  const plan = gatherPlan(shape, [seqRow(0, length)]);
  const host = arrays.map((a) => new backend.Tensor('float32', a, [a.length]));
  return (await backend.copyOnDevice!(plan, [host]))!;
}

/** A plan that copies all of a result of `plan`, padding included: to read it back as it is. */
const whole = (plan: CopyPlan): CopyPlan => ({ ...plan, ranges: [{ source: 0, from: 0, to: 0, count: plan.size }] });

describe.skipIf(NODE_WEBGPU_SKIP)('KV copy plans on WebGPU in Node', () => {
  it('gathers sequences into a left-padded batch on the GPU, as the host would', async () => {
    const a = seq(3, 1);
    const b = seq(5, 2);
    const sources = [await upload(a, 3), await upload(b, 5)];
    expect(sources.flat().every((t) => t.location === 'gpu-buffer')).toBe(true);
    const plan = gatherPlan(shape, [seqRow(1, 5), seqRow(0, 3)], 'left');
    const batch = (await backend.copyOnDevice!(plan, sources))!;
    expect(batch.every((t) => t.location === 'gpu-buffer' && t.dims.join() === plan.dims.join())).toBe(true);
    expect(await backend.copyToHost!(whole(plan), [batch])).toEqual(runOnHost(plan, [a, b]));
    for (const t of [...sources.flat(), ...batch]) t.dispose();
  });

  it('keeps rows of a right-padded batch and takes one out for the prefix cache', async () => {
    const a = seq(2, 3);
    const b = seq(4, 4);
    const rows = [seqRow(0, 2), seqRow(1, 4)];
    const plan = gatherPlan(shape, rows, 'right');
    const batch = (await backend.copyOnDevice!(plan, [await upload(a, 2), await upload(b, 4)]))!;
    const hostBatch = runOnHost(plan, [a, b]);
    expect(await backend.copyToHost!(plan, [await upload(a, 2), await upload(b, 4)])).toEqual(hostBatch);
    const row = gatherPlan(shape, [batchRow(0, { width: plan.width, pads: plan.pads, padding: 'right' }, 0)]);
    expect(await backend.copyToHost!(row, [batch])).toEqual(runOnHost(row, [hostBatch]));
    for (const t of batch) t.dispose();
  });

  it('takes host arrays beside GPU tensors (a cached prefix prefilled with another chunk)', async () => {
    const a = seq(3, 5);
    const b = seq(2, 6);
    const host = b.map((x) => new backend.Tensor('float32', x, [x.length]));
    const plan = gatherPlan(shape, [seqRow(0, 3), seqRow(1, 2)]);
    expect(await backend.copyToHost!(plan, [await upload(a, 3), host])).toEqual(runOnHost(plan, [a, b]));
  });

  it('splices a row of a batched prefill into its own cache', async () => {
    const a = seq(6, 7);
    const plan = splicePlan(shape, 0, 6, [[1, 3], [4, 6]]);
    expect(await backend.copyToHost!(plan, [await upload(a, 6)])).toEqual(runOnHost(plan, [a]));
  });
});
