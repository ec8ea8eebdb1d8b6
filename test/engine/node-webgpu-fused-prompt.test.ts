// A fused export (GroupQueryAttention) served on onnxruntime-node's WebGPU provider with a
// prompt longer than the 31 new tokens a run its attention gets right there: the engine
// prefills it in chunks of 31, and the greedy tokens and their logprobs are the CPU's (with one
// chunk of 70 the first logprob is off by 0.04 while the greedy tokens still agree).
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeBackend } from '../../src/backends/node.js';
import { createEngine } from '../../src/engine/engine.js';
import type { Device, EngineApi } from '../../src/engine/protocol.js';
import { greedy } from '../helpers/engine-on.js';
import { exportFixtures } from '../helpers/exports.js';
import { NODE_WEBGPU_SKIP } from '../helpers/node-webgpu.js';

const NAME = 'llama3_2-fused-export';
const MODEL = 'svc/fused';
const LONG = 'Tell me everything you know about rivers, lakes, the sea, mountains, forests, deserts, cities and the people who live in them, in order.';

async function engineOn(device: Device): Promise<EngineApi> {
  const engine = createEngine(nodeBackend(device));
  const source = join(await exportFixtures(), NAME);
  await engine.load([{ id: MODEL, task: 'chat', class: 'tiny', context_length: 2048, source, dtype: { [device]: 'fp32' }, price: { input_per_1m: 0, output_per_1m: 0 } }]);
  for (let i = 0; i < 600 && (await engine.models())[0]!.status === 'starting'; i++) await new Promise((r) => setTimeout(r, 50));
  return engine;
}

const generate = (engine: EngineApi) =>
  engine.generate({ id: `p${Math.random()}`, model: MODEL, prompt: { messages: [{ role: 'user', content: LONG }] }, sampling: greedy(8, { logprobs: 0 }) }, () => undefined);

let cpu: Awaited<ReturnType<typeof generate>>;
let gpu: EngineApi;

beforeAll(async () => {
  if (NODE_WEBGPU_SKIP) return;
  const engine = await engineOn('cpu');
  cpu = await generate(engine);
  await engine.dispose();
  gpu = await engineOn('webgpu');
}, 120_000);

afterAll(() => gpu?.dispose());

describe.skipIf(NODE_WEBGPU_SKIP)('a fused export on WebGPU in Node', () => {
  it("gives the CPU's greedy tokens for a prompt longer than 31 tokens (prefilled in chunks of 31)", async () => {
    expect(cpu.prompt_tokens).toBeGreaterThan(62);
    const r = await generate(gpu);
    expect(r.prompt_tokens).toBe(cpu.prompt_tokens);
    expect(r.token_ids).toEqual(cpu.token_ids);
    // Greedy tokens of random weights can survive a wrong attention output; their logprobs do not.
    const diffs = r.logprobs!.map((l, i) => Math.abs(l.logprob - cpu.logprobs![i]!.logprob));
    expect(Math.max(...diffs)).toBeLessThan(1e-3);
  }, 180_000);
});
