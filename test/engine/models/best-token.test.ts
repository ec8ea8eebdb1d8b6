// The outputs added at load beside the logits (best-token.ts): each position's maximum logit
// and the lowest id holding it. On real export forms (float32 and float16 logits, plain and
// fused, weights inside or in external data) they equal a scan of the logits the same run
// returned; on logits with ties the lowest id wins, under the opsets where a reduction takes
// its axes as an attribute (below 18) and as an input, in both forms (ArgMax on the CPU, the
// least id at the maximum elsewhere; test/engine/sampling/candidates-webgpu.test.ts runs the
// latter's ops on WebGPU, and this file the edit itself there, on rows long enough to be split into blocks).
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { nodeBackend } from '../../../src/backends/node.js';
import { BEST_ID_OUTPUT, BEST_LOGIT_OUTPUT, addBestToken, blocking, type BestTokenForm } from '../../../src/engine/models/best-token.js';
import { decoderEdit } from '../../../src/engine/models/decoder-edits.js';
import { createModelSession } from '../../../src/engine/models/files.js';
import { decodeModelProto, encodeModelProto } from '../../../src/onnx/model-proto.js';
import { floatToHalf } from '../../../src/onnx/half.js';
import { GraphBuilder, TensorType } from '../../../src/onnx/graph.js';
import { halfToFloat } from '../../../src/engine/models/interface.js';
import { floats, promptRows, rightPaddedFeeds } from '../../helpers/decoder-feeds.js';
import { exportEntry, exportFixtures } from '../../helpers/exports.js';
import { sortedFirst, tiedRows } from '../../helpers/head-rows.js';
import { NODE_WEBGPU_SKIP } from '../../helpers/node-webgpu.js';
import type { Backend } from '../../../src/backends/types.js';

let fixtures: string;
beforeAll(async () => {
  fixtures = await exportFixtures();
}, 600_000);

const backend = nodeBackend('cpu');

describe("each position's best token beside the logits", () => {
  it.each([
    ['llama3-export', 'fp32', 'argmax'],
    ['llama3_2-fused-export', 'q4f16', 'argmax'],
    ['phi3-export', 'q4f16', 'least-id'],
  ] as const)('%s %s: is the maximum of the logits the run returned, at its lowest id (%s)', async (name, dtype, form) => {
    const session = await createModelSession(backend, join(fixtures, name), exportEntry(fixtures, name, dtype), [], decoderEdit(form));
    try {
      expect(session.outputNames).toEqual(expect.arrayContaining([BEST_ID_OUTPUT, BEST_LOGIT_OUTPUT]));
      const out = await session.run(rightPaddedFeeds(backend.Tensor, session, promptRows([5, 3]), [[4], [2]]));
      const logits = floats(out.logits!);
      const [rows, , vocab] = out.logits!.dims as number[];
      const ids = out[BEST_ID_OUTPUT]!.data as Float32Array;
      const best = out[BEST_LOGIT_OUTPUT]!.data as Float32Array;
      for (let r = 0; r < rows!; r++) {
        const row = logits.subarray(r * vocab!, (r + 1) * vocab!);
        const [id] = sortedFirst(row, 1);
        expect([ids[r], best[r]]).toEqual([id, row[id!]]);
      }
    } finally {
      await session.release();
    }
  });

  // 151,936 (Qwen) splits into 128 blocks; 50,021 (a prime) is padded to whole blocks.
  const cases: [string, number, BestTokenForm, number][] = [
    ['float32', 17, 'argmax', 151_936], ['float16', 17, 'argmax', 151_936], ['float16', 18, 'argmax', 151_936],
    ['float32', 17, 'least-id', 151_936], ['float16', 17, 'least-id', 151_936], ['float16', 18, 'least-id', 151_936],
    ['float32', 17, 'least-id', 50_021], ['float16', 18, 'least-id', 50_021],
  ];
  for (const [type, opset, form, vocab] of cases as [('float32' | 'float16'), number, BestTokenForm, number][]) {
    it(`takes the lowest id among equal maxima (${type} logits, opset ${opset}, ${form}, vocabulary ${vocab})`, () => expectLowestIdOfTies(backend, type, opset, form, vocab));
  }

  // Where the engine runs the least-id form: float32 logits (SwiftShader has no shader-f16).
  it.skipIf(NODE_WEBGPU_SKIP).each([151_936, 50_021])('takes the lowest id among equal maxima on WebGPU (least-id, vocabulary %i)', (vocab) =>
    expectLowestIdOfTies(nodeBackend('webgpu'), 'float32', 17, 'least-id', vocab), 120_000);

  it('splits a long row into about 128 blocks, padding only where the vocabulary has no divisor near that', () => {
    expect(blocking(151_936)).toEqual({ size: 1187, blocks: 128, pad: 0 });
    expect(blocking(512)).toEqual({ size: 512, blocks: 1, pad: 0 });
    expect(blocking(50_021)).toEqual({ size: 391, blocks: 128, pad: 27 });
  });

  it('leaves a graph without a logits output alone', () => {
    const g = new GraphBuilder('no_logits');
    g.output('hidden', g.input('x', TensorType.FLOAT, [1, 4]), TensorType.FLOAT, [1, 4]);
    expect(addBestToken(decodeModelProto(g.toBytes()), 'argmax')).toBe('the graph has no logits output');
  });
});

/** A logits-only graph with the outputs added, run on rows where several ids share the maximum. */
async function expectLowestIdOfTies(on: Backend, type: 'float32' | 'float16', opset: number, form: BestTokenForm, vocab: number): Promise<void> {
  const g = new GraphBuilder('logits_only');
  const onnxType = type === 'float16' ? TensorType.FLOAT16 : TensorType.FLOAT;
  g.output('logits', g.input('x', onnxType, ['batch', 'positions', vocab]), onnxType, ['batch', 'positions', vocab]);
  const model = decodeModelProto(g.toBytes());
  model.opset_import = [{ domain: '', version: opset }];
  expect(addBestToken(model, form)).toBeNull();
  // Through the backend, which feeds float16 as the binding reads it on Node 24.
  const session = await on.createSession(encodeModelProto(model));
  try {
    const raw = tiedRows(3, vocab, 9);
    const seen = type === 'float16' ? Float32Array.from(raw, (v) => halfToFloat(floatToHalf(v))) : raw;
    const out = await session.run({ x: new on.Tensor(type, type === 'float16' ? Uint16Array.from(raw, floatToHalf) : raw, [1, 3, vocab]) });
    expect(out[BEST_ID_OUTPUT]!.dims).toEqual([1, 3, 1]);
    for (let p = 0; p < 3; p++) {
      const row = seen.subarray(p * vocab, (p + 1) * vocab);
      const [id] = sortedFirst(row, 1);
      expect([(out[BEST_ID_OUTPUT]!.data as Float32Array)[p], (out[BEST_LOGIT_OUTPUT]!.data as Float32Array)[p]]).toEqual([id, row[id!]]);
    }
  } finally {
    await session.release();
  }
}
