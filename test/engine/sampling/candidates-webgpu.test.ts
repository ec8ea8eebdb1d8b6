// The sampling head on onnxruntime-node's WebGPU (SwiftShader here), where the engine runs it
// on a GPU: each top-K form gives a full sort's first 64 (ties by the lower id) and the best
// token is the row's maximum at its lowest id, on rows where the maximum and the 64th value
// are shared by several ids. (float32 rows: SwiftShader has no shader-f16.)
import { describe, expect, it } from 'vitest';
import { NODE_WEBGPU_SKIP } from '../../helpers/node-webgpu.js';
import { HEAD_CANDIDATES } from '../../../src/engine/models/logits-head.js';
import { QWEN_VOCAB, runBest, runHead, sortedFirst, tiedRows } from '../../helpers/head-rows.js';

const ROWS = 2;
const raw = tiedRows(ROWS, QWEN_VOCAB, 5);
const row = (r: number) => raw.subarray(r * QWEN_VOCAB, (r + 1) * QWEN_VOCAB);

describe.skipIf(NODE_WEBGPU_SKIP)('the sampling head on WebGPU', () => {
  it.each(['single', 'blocked'] as const)("gives a full sort's first 64 of each row with the %s top-K", async (topK) => {
    const head = await runHead(raw, ROWS, QWEN_VOCAB, 'float32', topK, [1, 1], 'webgpu');
    for (let r = 0; r < ROWS; r++) {
      expect(Array.from(head.indices.subarray(r * HEAD_CANDIDATES, (r + 1) * HEAD_CANDIDATES), Number)).toEqual(sortedFirst(row(r), HEAD_CANDIDATES));
    }
  }, 120_000);

  it.each(['single', 'blocked'] as const)("gives the row's maximum at its lowest id as the best token (%s form)", async (topK) => {
    const best = await runBest(raw, ROWS, QWEN_VOCAB, 'float32', 'webgpu', topK);
    for (let r = 0; r < ROWS; r++) {
      const [id] = sortedFirst(row(r), 1);
      expect(best[r]).toEqual([id, row(r)[id!]]);
    }
  }, 120_000);
});
