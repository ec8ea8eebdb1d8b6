// The scheduler on onnxruntime-node's WebGPU (SwiftShader here), the KV cache on the GPU:
// requests of different lengths batched together, joining and leaving as they go, each get
// the tokens they get alone; a prompt whose prefix the cache holds gets the tokens it gets
// without the cache. Joining and leaving are repacked on the GPU (copy graphs), so the
// only reads back are the prefix cache's, one per sequence it stores. On the default
// fixture (left padding) and the fused export (GroupQueryAttention: right padding).
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeBackend } from '../../src/backends/node.js';
import { PrefixCache } from '../../src/engine/kv/prefix-cache.js';
import { exportFixtures } from '../helpers/exports.js';
import { NODE_WEBGPU_SKIP } from '../helpers/node-webgpu.js';
import { generate, idle, loadOn, recordingScheduler, user, type DeviceModel } from '../helpers/device-runs.js';

const PROMPTS = ['Hi', 'What is fire?', 'Tell me about the rivers and mountains of Europe, please.', 'Why is ice cold?'].map(user);
/** Replies of different lengths, so rows leave the batch at different steps. */
const MAX_TOKENS = [2, 3, 2, 3];
/** Below the 32 new tokens onnxruntime's WebGPU GroupQueryAttention gets wrong (test/backends/webgpu-gqa-prompt.test.ts). */
const FUSED_CHUNK = 31;

const models: Record<string, DeviceModel> = {};

beforeAll(async () => {
  if (NODE_WEBGPU_SKIP) return;
  const dir = await exportFixtures();
  models['tiny-chat'] = await loadOn('webgpu', join(dir, 'tiny-chat'));
  models['llama3_2-fused-export'] = await loadOn('webgpu', join(dir, 'llama3_2-fused-export'));
}, 120_000);

afterAll(async () => {
  for (const m of Object.values(models)) await m.lm.dispose();
});

describe.skipIf(NODE_WEBGPU_SKIP).each([
  ['tiny-chat', undefined],
  ['llama3_2-fused-export', FUSED_CHUNK],
])('batching on WebGPU in Node (%s)', (name, prefillChunk) => {
  it('gives each of 4 concurrent requests of different lengths the tokens it gets alone, repacking on the GPU', async () => {
    const m = models[name]!;
    const alone: number[][] = [];
    for (const [i, p] of PROMPTS.entries()) alone.push((await generate(recordingScheduler(m, { prefillChunk }).s, m, p, { max_tokens: MAX_TOKENS[i] })).token_ids);
    const { s, steps } = recordingScheduler(m, { prefillChunk });
    const together = await Promise.all(PROMPTS.map((p, i) => generate(s, m, p, { max_tokens: MAX_TOKENS[i] })));
    expect(together.map((r) => r.token_ids)).toEqual(alone);
    expect(Math.max(...steps.map((step) => step.rows))).toBeGreaterThan(1);
    expect(steps.every((step) => step.onGpu)).toBe(true);
    expect(m.lm.reads.batch).toBe(0);
  }, 240_000);

  it('gives a prompt whose prefix the cache holds the tokens it gets without the cache, reading back only what the cache stores', async () => {
    const m = models[name]!;
    const system = { role: 'system' as const, content: 'You are a helpful assistant who answers in short words.' };
    const hit = [system, ...user('Why is the sea salty?')];
    const expected = (await generate(recordingScheduler(m, { prefillChunk }).s, m, hit)).token_ids;
    const cache = new PrefixCache(m.lm.kvShape, 64 << 20);
    const { s, steps } = recordingScheduler(m, { prefixCache: cache, prefillChunk });
    const reads = () => m.lm.reads.prefixCache;

    const before = reads();
    await generate(s, m, [system, ...user('What is fire?')]);
    await idle(s);
    // One read per sequence stored: the prompt once prefilled, prompt and reply at the end.
    expect(reads() - before).toBe(2);

    const r = await generate(s, m, hit);
    expect(r.cached_tokens).toBeGreaterThan(10);
    expect(r.token_ids).toEqual(expected);
    await idle(s);
    expect(reads() - before).toBe(4);

    // The same request again: the cache holds its prompt and reply, so nothing is read.
    expect((await generate(s, m, hit)).token_ids).toEqual(expected);
    await idle(s);
    expect(reads() - before).toBe(4);
    expect(steps.every((step) => step.onGpu)).toBe(true);
    expect(m.lm.reads.batch).toBe(0);
  }, 240_000);
});

describe.skipIf(NODE_WEBGPU_SKIP)('prefilling on WebGPU in Node', () => {
  it("gathers a cached prefix (host arrays) and another prompt's earlier chunk (GPU buffers) into one run, each with its tokens alone", async () => {
    // The backend's device copies, recorded by where their sources are.
    const backend = nodeBackend('webgpu');
    const copy = backend.copyOnDevice!;
    const sources: string[] = [];
    backend.copyOnDevice = (plan, from) => (sources.push(from.map((s) => s[0]!.location).join('+')), copy(plan, from));
    const m = await loadOn('webgpu', join(await exportFixtures(), 'tiny-chat'), 'fp32', backend);
    try {
      const system = { role: 'system' as const, content: 'You are a helpful assistant who answers in short words.' };
      const long = user('a long prompt about rivers and stones and quiet gardens in winter '.repeat(2));
      const hit = [system, ...user('Why is the sea salty?')];
      // 32 prompt tokens a turn: the long prompt's first chunk, then the hit's rest beside the long one's next chunk.
      const prefillChunk = 32;
      const alone = [];
      for (const p of [long, hit]) alone.push((await generate(recordingScheduler(m, { prefillChunk }).s, m, p)).token_ids);
      const { s } = recordingScheduler(m, { prefixCache: new PrefixCache(m.lm.kvShape, 64 << 20), prefillChunk });
      await generate(s, m, [system, ...user('What is fire?')]);
      await idle(s);
      sources.length = 0;
      const together = await Promise.all([generate(s, m, long), generate(s, m, hit)]);
      expect(together.map((r) => r.token_ids)).toEqual(alone);
      expect(together[1]!.cached_tokens).toBeGreaterThan(10);
      expect(sources).toContain('gpu-buffer+cpu');
    } finally {
      await m.lm.dispose();
    }
  }, 120_000);
});
