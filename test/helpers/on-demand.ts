// An in-process engine serving the fixtures on demand, and what the on-demand tests ask of it.
import { join } from 'node:path';
import { nodeBackend } from '../../src/backends/node.js';
import { createEngine } from '../../src/engine/engine.js';
import type { EngineOptions } from '../../src/engine/options.js';
import type { CatalogEntry, EngineApi, GenerateRequest, ModelState, SamplingParams } from '../../src/engine/protocol.js';
import { fixtures } from './fixtures.js';

const price = { input_per_1m: 0.1, output_per_1m: 0.4 };
export const greedy: SamplingParams = {
  temperature: 0, top_p: 1, top_k: -1, min_p: 0, presence_penalty: 0, frequency_penalty: 0,
  stop: [], stop_token_ids: [], ignore_eos: false, logprobs: -1,
};

let n = 0;
export const chatRequest = (model: string, extra: Partial<GenerateRequest> = {}, sampling: Partial<SamplingParams> = {}): GenerateRequest => ({
  id: `od${n++}`,
  model,
  prompt: { messages: [{ role: 'user', content: 'Hello there' }] },
  sampling: { ...greedy, ...sampling },
  ...extra,
});

/** Two chat models (the same fixture under two ids) and the embedder. */
export async function fixtureCatalog(): Promise<CatalogEntry[]> {
  const dir = await fixtures();
  const chat = (id: string): CatalogEntry => ({ id, task: 'chat', class: 'tiny', context_length: 2048, source: join(dir, 'tiny-chat'), price });
  return [chat('svc/chat-a'), chat('svc/chat-b'), { id: 'svc/embed', task: 'embedding', class: 'tiny', context_length: 512, source: join(dir, 'tiny-embed'), price }];
}

export async function onDemandEngine(opts: EngineOptions = {}): Promise<Required<EngineApi>> {
  const engine = createEngine(nodeBackend('cpu'), { load: 'on-demand', ...opts }) as Required<EngineApi>;
  await engine.load(await fixtureCatalog());
  return engine;
}

export async function stateOf(engine: EngineApi, id: string): Promise<ModelState> {
  return (await engine.models()).find((m) => m.id === id)!;
}

export async function until(engine: EngineApi, id: string, ok: (m: ModelState) => boolean, ms = 20_000): Promise<ModelState> {
  const end = Date.now() + ms;
  for (;;) {
    const m = await stateOf(engine, id);
    if (ok(m)) return m;
    if (Date.now() > end) throw new Error(`timed out; last state ${JSON.stringify(m)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export async function loadsOf(engine: Required<EngineApi>, id: string): Promise<number> {
  return (await engine.stats()).models.find((m) => m.id === id)?.loads ?? 0;
}

export async function unloadsOf(engine: Required<EngineApi>, id: string): Promise<Record<string, number>> {
  return (await engine.stats()).models.find((m) => m.id === id)?.unloads ?? {};
}
