// The engine on onnxruntime-node's WebGPU (SwiftShader here) counts its KV cache's reads back
// to the host in its stats and in /metrics (hearth_kv_device_reads_total): a decode step
// reads nothing; a request reads once per sequence the prefix cache stores (its prompt after
// prefill, prompt and reply at the end), nothing once the cache holds both, and nothing at
// all with the prefix cache off.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineApi } from '../../src/engine/protocol.js';
import { createMetrics } from '../../src/ops/metrics.js';
import { NODE_WEBGPU_SKIP } from '../helpers/node-webgpu.js';
import { MODEL, engineOn, greedy, request, settledStats } from '../helpers/engine-on.js';

const engines: EngineApi[] = [];
afterAll(async () => {
  for (const e of engines) await e.dispose();
});

async function metricValue(engine: EngineApi, name: string): Promise<number | undefined> {
  const m = createMetrics({ defaultMetrics: false });
  m.setEngine(engine);
  const line = (await m.source.render()).body.split('\n').find((l) => l.startsWith(`${name}{model="${MODEL}"} `));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

describe.skipIf(NODE_WEBGPU_SKIP)('KV reads back from the GPU in Node', () => {
  let engine: EngineApi;
  beforeAll(async () => {
    if (NODE_WEBGPU_SKIP) return;
    engine = await engineOn('webgpu');
    engines.push(engine);
  }, 120_000);

  it('are one per sequence the prefix cache stores and none for decode steps, in stats and /metrics', async () => {
    const before = await settledStats(engine);
    const r = await engine.generate(request('What is fire?', greedy(6, { ignore_eos: true })), () => undefined);
    expect(r.token_ids).toHaveLength(6);
    const after = await settledStats(engine);
    expect(after.decode_steps! - before.decode_steps!).toBe(5);
    expect(after.kv_device_reads! - before.kv_device_reads!).toBe(2);
    expect(after.kv_prefix_cache_reads! - before.kv_prefix_cache_reads!).toBe(2);
    expect(await metricValue(engine, 'hearth_kv_device_reads_total')).toBe(after.kv_device_reads);

    // The cache holds this prompt and reply now: the same request reads nothing.
    await engine.generate(request('What is fire?', greedy(6, { ignore_eos: true })), () => undefined);
    expect((await settledStats(engine)).kv_device_reads).toBe(after.kv_device_reads);
  }, 180_000);

  it('are none at all with the prefix cache off', async () => {
    const off = await engineOn('webgpu', 0);
    engines.push(off);
    await Promise.all(['What is fire?', 'Where is the ice?'].map((q) => off.generate(request(q, greedy(5, { ignore_eos: true })), () => undefined)));
    const s = await settledStats(off);
    expect(s.decode_steps).toBeGreaterThan(0);
    expect(s.kv_device_reads).toBe(0);
  }, 180_000);
});
