// The op types of an ONNX graph, read from the file without reading its weights: what
// tells a GroupQueryAttention export (batches padded on the right) from a plain one.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MessageWriter, concatChunks } from '../../../src/onnx/proto.js';
import { nodeBackend } from '../../../src/backends/node.js';
import { graphOpTypes, readGraphOps } from '../../../src/engine/models/graph-ops.js';
import { exportFixtures } from '../../helpers/exports.js';

/** readRange over a file, counting the bytes it returns. */
function countingReader(path: string) {
  const backend = nodeBackend('cpu');
  const counter = { bytes: 0 };
  const read = async (offset: number, length: number) => {
    const b = await backend.readRange!(path, offset, length);
    counter.bytes += b.length;
    return b;
  };
  return { read, counter };
}

describe('graph op types', () => {
  it('finds the fused ops of a builder export, reading a small part of the file', async () => {
    const path = join(await exportFixtures(), 'llama3_2-fused-export', 'onnx', 'model.onnx');
    const { read, counter } = countingReader(path);
    const size = statSync(path).size;
    const ops = await graphOpTypes(read, size);
    expect([...ops]).toEqual(expect.arrayContaining(['GroupQueryAttention', 'SimplifiedLayerNormalization', 'SkipSimplifiedLayerNormalization', 'MatMul', 'ReduceSum']));
    expect(counter.bytes).toBeLessThan(size / 10); // the weights (inline here) are jumped over
  });

  it('finds MatMulNBits and GatherBlockQuantized in its q4 file', async () => {
    const ops = await readGraphOps(nodeBackend('cpu'), join(await exportFixtures(), 'llama3_2-fused-export', 'onnx', 'model_q4.onnx'));
    expect([...ops]).toEqual(expect.arrayContaining(['GroupQueryAttention', 'MatMulNBits', 'GatherBlockQuantized']));
  });

  it('finds no GroupQueryAttention in a plain export, weights in external data or not', async () => {
    const dir = await exportFixtures();
    for (const file of ['llama3-export/onnx/model.onnx', 'qwen3-export/onnx/model_q4f16.onnx', 'tiny-chat/onnx/model.onnx']) {
      const ops = await readGraphOps(nodeBackend('cpu'), join(dir, file));
      expect(ops.has('MatMul') || ops.has('MatMulNBits'), file).toBe(true);
      expect(ops.has('GroupQueryAttention'), file).toBe(false);
    }
  });

  it('looks inside subgraphs (an If branch)', async () => {
    // ModelProto { graph { node { op_type: If, attribute { name: then_branch, type: GRAPH, g { node { op_type } } } } } }
    const node = (op: string, attrs: MessageWriter[] = []) => {
      const w = new MessageWriter().string(4, op);
      for (const a of attrs) w.message(5, a.done());
      return w.done();
    };
    const branch = new MessageWriter().message(1, node('GroupQueryAttention')).string(2, 'then').done();
    const attr = new MessageWriter().string(1, 'then_branch').message(6, branch).int(20, 5);
    const graph = new MessageWriter().message(1, node('If', [attr])).string(2, 'main').done();
    const bytes = concatChunks(new MessageWriter().int(1, 8).message(7, graph).done());
    const ops = await graphOpTypes(async (o, n) => bytes.subarray(o, o + n), bytes.length);
    expect([...ops].sort()).toEqual(['GroupQueryAttention', 'If']);
  });

  it('gives nothing to go on where the backend cannot read part of a file', async () => {
    const path = join(await exportFixtures(), 'tiny-chat', 'onnx', 'model.onnx');
    const ops = await readGraphOps({ fileSize: async () => readFileSync(path).length }, path);
    expect(ops.size).toBe(0);
  });
});
