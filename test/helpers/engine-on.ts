// The engine (the model host: warm-up, prefix cache, stats) on a device, serving the default
// chat fixture, for tests that compare devices through the engine's own interface.
import { join } from 'node:path';
import { nodeBackend } from '../../src/backends/node.js';
import { createEngine } from '../../src/engine/engine.js';
import type { Device, EngineApi, GenerateRequest, ModelStats, SamplingParams } from '../../src/engine/protocol.js';
import { fixtures } from './fixtures.js';

export const MODEL = 'svc/tiny-chat';

export const greedy = (max_tokens: number, more: Partial<SamplingParams> = {}): SamplingParams => ({
  temperature: 0, top_p: 1, top_k: -1, min_p: 0, presence_penalty: 0, frequency_penalty: 0,
  stop: [], stop_token_ids: [], ignore_eos: false, logprobs: -1, max_tokens, ...more,
});

/** An engine serving the default chat fixture on `device`, once it is ready. */
export async function engineOn(device: Device, kvCacheMb?: number): Promise<EngineApi> {
  const engine = createEngine(nodeBackend(device), { kvCacheMb });
  await engine.load([{ id: MODEL, task: 'chat', class: 'tiny', context_length: 2048, source: join(await fixtures(), 'tiny-chat'), price: { input_per_1m: 0, output_per_1m: 0 } }]);
  for (let i = 0; i < 600 && (await engine.models())[0]!.status === 'starting'; i++) await new Promise((r) => setTimeout(r, 50));
  const [m] = await engine.models();
  if (m!.status !== 'ready') throw new Error(`${MODEL} on ${device}: ${m!.status} (${JSON.stringify(m)})`);
  return engine;
}

let n = 0;
export const request = (content: string, sampling: SamplingParams): GenerateRequest => ({ id: `e${n++}`, model: MODEL, prompt: { messages: [{ role: 'user', content }] }, sampling });

/** The model's figures once its step loop holds no sequence (a result arrives before its row is stored and leaves the batch). */
export async function settledStats(engine: EngineApi): Promise<ModelStats> {
  for (;;) {
    const s = (await engine.stats!()).models.find((m) => m.id === MODEL)!;
    if (s.active + s.queued === 0) return s;
    await new Promise((r) => setTimeout(r, 5));
  }
}
