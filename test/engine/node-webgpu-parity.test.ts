// Every fp32 fixture (the default one and each export interface, the fused one included) on
// onnxruntime-node's WebGPU (SwiftShader here) gives the CPU's greedy tokens, its KV cache
// kept on the GPU: each decode step is fed the previous step's GPU buffers, and nothing is
// read back. Short replies: SwiftShader runs a graph in 0.2-5 s.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NODE_WEBGPU_SKIP } from '../helpers/node-webgpu.js';
import { EXPORT_VARIANTS, exportFixtures } from '../helpers/exports.js';
import { generate, loadOn, recordingScheduler, user } from '../helpers/device-runs.js';

const FP32 = ['tiny-chat', ...EXPORT_VARIANTS.filter(([, dtype]) => dtype === 'fp32').map(([name]) => name)];
/**
 * onnxruntime 1.30's WebGPU GroupQueryAttention (on SwiftShader) is wrong for 32 or more new
 * tokens in one run (test/backends/webgpu-gqa-prompt.test.ts), and Llama 3.2's template
 * alone is longer: the fused export's prompt goes in chunks below that.
 */
const PREFILL_CHUNK: Record<string, number> = { 'llama3_2-fused-export': 31 };

describe.skipIf(NODE_WEBGPU_SKIP)('greedy tokens on WebGPU in Node', () => {
  it.each(FP32)("%s gives the CPU's tokens, its cache on the GPU from step to step", async (name) => {
    const folder = join(await exportFixtures(), name);
    const prompt = user('What is fire?');
    const cpu = await loadOn('cpu', folder);
    const expected = (await generate(recordingScheduler(cpu).s, cpu, prompt)).token_ids;
    await cpu.lm.dispose();

    const gpu = await loadOn('webgpu', folder);
    try {
      const { s, steps } = recordingScheduler(gpu, { prefillChunk: PREFILL_CHUNK[name] });
      expect((await generate(s, gpu, prompt)).token_ids).toEqual(expected);
      expect(steps.length).toBe(expected.length - 1);
      expect(steps.every((step) => step.onGpu)).toBe(true);
      expect(gpu.lm.reads).toEqual({ batch: 0, prefixCache: 0 });
    } finally {
      await gpu.lm.dispose();
    }
  }, 240_000);
});
