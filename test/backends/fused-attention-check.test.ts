// The adapter self-check that decides fused attention's workarounds: on SwiftShader (where
// onnxruntime-node 1.30's WebGPU GroupQueryAttention is wrong from 32 new tokens in a run) it
// keeps the 31-token prefill chunks; a device that answers as the CPU does gets none; a
// device with a fault gets the workaround for that fault; and a model loaded on a backend
// runs its scheduler with exactly what the check said, and lists it in its state.
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { describe, expect, it } from 'vitest';
import { checkFusedAttention, type OpenCheckSession } from '../../src/backends/fused-attention-check.js';
import { nodeBackend } from '../../src/backends/node.js';
import type { Backend, InferenceSession } from '../../src/backends/types.js';
import { ModelHost } from '../../src/engine/model-host.js';
import { exportFixtures } from '../helpers/exports.js';
import { NODE_WEBGPU_SKIP } from '../helpers/node-webgpu.js';

const cpuSession = async (graph: Uint8Array) => (await ort.InferenceSession.create(graph, { executionProviders: ['cpu'] })) as unknown as InferenceSession;

/** A "device" that is the CPU, but whose output is off where `faulty(feeds)` says. */
function deviceWith(faulty: (feeds: Record<string, ort.Tensor>) => boolean): OpenCheckSession {
  return async (graph) => {
    const session = await cpuSession(graph);
    const run = session.run.bind(session);
    session.run = (async (feeds: Record<string, ort.Tensor>) => {
      const out = await run(feeds as never);
      if (faulty(feeds)) (out.output!.data as Float32Array).forEach((v, i, a) => (a[i] = v + 0.1));
      return out;
    }) as typeof session.run;
    return session;
  };
}

const open = (device: OpenCheckSession): OpenCheckSession => (graph, on) => (on === 'device' ? device(graph, on) : cpuSession(graph));
const newTokens = (f: Record<string, ort.Tensor>) => f.qkv!.dims[1]!;
const rows = (f: Record<string, ort.Tensor>) => f.qkv!.dims[0]!;

describe('the fused-attention self-check', () => {
  it('applies no workaround on a device that answers as the CPU does', async () => {
    expect(await checkFusedAttention(open(deviceWith(() => false)), ort.Tensor as never)).toEqual({ applied: [] });
  });

  it('prefills in the longest chunk the device gets right when long runs are wrong', async () => {
    const check = await checkFusedAttention(open(deviceWith((f) => newTokens(f) > 20)), ort.Tensor as never);
    expect(check.maxNewTokens).toBe(16);
    expect(check.oneRowPerRun).toBeUndefined();
    expect(check.applied).toEqual([expect.stringContaining('chunks of 16 tokens')]);
  });

  it('runs one row a run when rows of different lengths together are wrong', async () => {
    const check = await checkFusedAttention(open(deviceWith((f) => rows(f) > 1)), ort.Tensor as never);
    expect(check).toEqual({ oneRowPerRun: true, applied: [expect.stringContaining('one row a run')] });
  });

  it.skipIf(NODE_WEBGPU_SKIP)("keeps the 31-token chunks on SwiftShader's WebGPU, where 32 new tokens are wrong", async () => {
    const check = await nodeBackend('webgpu').fusedAttentionWorkarounds!();
    expect(check.maxNewTokens).toBe(31);
    expect(check.applied[0]).toContain('chunks of 31 tokens');
  }, 120_000);
});

describe('a fused model loaded where the check has spoken', () => {
  const load = async (check: Awaited<ReturnType<NonNullable<Backend['fusedAttentionWorkarounds']>>>) => {
    const backend: Backend = { ...nodeBackend('cpu'), fusedAttentionWorkarounds: async () => check };
    const source = join(await exportFixtures(), 'llama3_2-fused-export');
    const host = new ModelHost({ id: 'svc/fused', task: 'chat', class: 'tiny', context_length: 2048, source, price: { input_per_1m: 0, output_per_1m: 0 } }, backend);
    await host.ready;
    return host;
  };

  it('runs whole prompts and full batches where the check applied nothing', async () => {
    const host = await load({ applied: [] });
    expect(host.state()).toMatchObject({ status: 'ready' });
    expect(host.state().workarounds).toBeUndefined();
    expect(host.loaded!.scheduler!.prefillChunk).toBe(256);
    expect(host.loaded!.scheduler!.maxBatch).toBe(32);
    await host.loaded!.lm!.dispose();
  });

  it('runs the chunks and single rows the check applied, and says so in its state', async () => {
    const host = await load({ maxNewTokens: 31, oneRowPerRun: true, applied: ['prompts prefill in chunks of 31 tokens (…)', 'one row a run (…)'] });
    expect(host.loaded!.scheduler!.prefillChunk).toBe(31);
    expect(host.loaded!.scheduler!.maxBatch).toBe(1);
    expect(host.state().workarounds).toEqual(['prompts prefill in chunks of 31 tokens (…)', 'one row a run (…)']);
    await host.loaded!.lm!.dispose();
  });
});
