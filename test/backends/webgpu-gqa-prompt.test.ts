// What onnxruntime-node 1.30's WebGPU provider does with GroupQueryAttention on SwiftShader
// (not checked on a GPU): its attention output is the CPU's for up to 31 new tokens in a run,
// whatever the past, and wrong from 32 on (the present keys stay right). Hearth's own code is
// not involved: one GroupQueryAttention node as onnxruntime-genai's builder writes it. This
// is why the fused export's WebGPU tests here prefill in chunks of 31 tokens; when this fails,
// onnxruntime has fixed it and the chunks can go.
import * as ort from 'onnxruntime-node';
import { describe, expect, it } from 'vitest';
import { fusedAttentionGraph } from '../../src/backends/fused-attention-check.js';
import { NODE_WEBGPU_SKIP } from '../helpers/node-webgpu.js';

const HEADS = 2;
const KV_HEADS = 1;
const HEAD_DIM = 16;

/** One GroupQueryAttention node as onnxruntime-genai's builder writes it: the adapter self-check's own graph. */
const attentionGraph = fusedAttentionGraph;

/** Deterministic values in [-1, 1). */
const values = (n: number, seed: number) => Float32Array.from({ length: n }, (_, i) => (((i * 7919 + seed * 104729) % 2000) / 1000) - 1);

async function largestDifference(past: number, fresh: number): Promise<number> {
  const graph = attentionGraph();
  const feeds = {
    qkv: new ort.Tensor('float32', values(fresh * (HEADS + 2 * KV_HEADS) * HEAD_DIM, 1), [1, fresh, (HEADS + 2 * KV_HEADS) * HEAD_DIM]),
    past_key: new ort.Tensor('float32', values(past * KV_HEADS * HEAD_DIM, 2), [1, KV_HEADS, past, HEAD_DIM]),
    past_value: new ort.Tensor('float32', values(past * KV_HEADS * HEAD_DIM, 3), [1, KV_HEADS, past, HEAD_DIM]),
    attention_mask: new ort.Tensor('int64', new BigInt64Array(past + fresh).fill(1n), [1, past + fresh]),
  };
  const [cpu, gpu] = await Promise.all(['cpu', 'webgpu'].map((ep) => ort.InferenceSession.create(graph, { executionProviders: [ep], logSeverityLevel: 3 })));
  const a = (await cpu!.run(feeds)).output!.data as Float32Array;
  const b = (await gpu!.run(feeds)).output!.data as Float32Array;
  return a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i]!)), 0);
}

describe.skipIf(NODE_WEBGPU_SKIP)("onnxruntime-node's WebGPU GroupQueryAttention on SwiftShader", () => {
  it.each([
    [0, 31],
    [20, 12],
    [40, 1],
  ])('agrees with the CPU for %i cached and %i new tokens', async (past, fresh) => {
    expect(await largestDifference(past, fresh)).toBeLessThan(1e-5);
  });

  it.each([
    [0, 32],
    [10, 40],
  ])('is wrong for %i cached and %i new tokens', async (past, fresh) => {
    expect(await largestDifference(past, fresh)).toBeGreaterThan(1e-2);
  });
});
