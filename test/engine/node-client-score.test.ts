// Scores cross the worker boundary as the Node server (and hearth/msw) call them: the engine
// client's score() reaches the worker's engine, with its refusals' codes intact.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeBackend } from '../../src/backends/node.js';
import { startNodeEngine, type NodeEngine } from '../../src/engine/client/node.js';
import { createEngine } from '../../src/engine/engine.js';
import type { CatalogEntry, EngineApi } from '../../src/engine/protocol.js';
import { modelsSettled } from '../../src/runtime.js';
import { fixtures } from '../helpers/fixtures.js';

let worker: NodeEngine;
let inProcess: EngineApi;
const price = { input_per_1m: 0, output_per_1m: 0 };
let entries: CatalogEntry[];

beforeAll(async () => {
  const dir = await fixtures();
  entries = [
    { id: 'svc/tiny-rerank', task: 'rerank', class: 't', context_length: 512, source: join(dir, 'tiny-rerank'), price },
    { id: 'svc/tiny-embed', task: 'embedding', class: 't', context_length: 512, source: join(dir, 'tiny-embed'), price },
  ];
  worker = startNodeEngine();
  inProcess = createEngine(nodeBackend('cpu'));
  await Promise.all([worker.load(entries), inProcess.load(entries.slice(0, 1))]);
  await Promise.all([modelsSettled(worker), modelsSettled(inProcess)]);
}, 60_000);
afterAll(async () => {
  await worker?.terminate();
  await inProcess?.dispose();
});

describe('score through the engine worker', () => {
  it('gives the in-process engine’s scores and token count', async () => {
    const req = { model: 'svc/tiny-rerank', pairs: [['What is the capital of France?', 'Paris'], ['What is the capital of France?', 'The dog ran to the park.']] as [string, string][] };
    const [a, b] = await Promise.all([worker.score(req), inProcess.score(req)]);
    expect(a.prompt_tokens).toBe(b.prompt_tokens);
    a.scores.forEach((s, i) => expect(s).toBeCloseTo(b.scores[i]!, 6));
  });

  it('keeps the wrong-task refusal’s code and param across the boundary', async () => {
    await expect(worker.score({ model: 'svc/tiny-embed', pairs: [['q', 'd']] })).rejects.toMatchObject({ code: 'unsupported_task', param: 'model' });
  });
});
