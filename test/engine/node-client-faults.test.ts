// The engine's worker thread failing under the Node client: a worker that dies is reported with
// its cause, the calls in flight fail with engine_crashed (the router's 503 with retry-after),
// and a fresh worker serves the next request; a worker stuck in synchronous work is ended by
// terminate() once its grace has passed.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startNodeEngine, type NodeEngine } from '../../src/engine/client/node.js';
import { EngineError } from '../../src/engine/errors.js';
import type { CatalogEntry, SamplingParams } from '../../src/engine/protocol.js';
import { modelsSettled } from '../../src/runtime.js';
import { fixtures } from '../helpers/fixtures.js';

const fault = join(mkdtempSync(join(tmpdir(), 'hearth-fault-')), 'fault');
process.env.HEARTH_TEST_WORKER_FAULT = fault;
const workerFile = new URL('../helpers/faulty-engine-worker.ts', import.meta.url);

const sampling: SamplingParams = {
  temperature: 0, top_p: 1, top_k: -1, min_p: 0, presence_penalty: 0, frequency_penalty: 0,
  stop: [], stop_token_ids: [], ignore_eos: true, logprobs: -1,
};
let entry: CatalogEntry;
let engine: NodeEngine | undefined;

beforeAll(async () => {
  const dir = await fixtures();
  entry = { id: 'svc/tiny-chat', task: 'chat', class: 'tiny', context_length: 2048, source: join(dir, 'tiny-chat'), price: { input_per_1m: 0, output_per_1m: 0 } };
});

afterEach(async () => {
  await engine?.terminate(500);
  engine = undefined;
});

async function started(onCrash?: (cause: Error | undefined, code: number) => void): Promise<NodeEngine> {
  const e = startNodeEngine({ workerFile, onCrash });
  await e.load([entry]);
  await modelsSettled(e);
  return e;
}

describe('the engine worker failing', () => {
  it('is reported with its cause, fails the generation in flight with engine_crashed, and serves the next', async () => {
    const crashes: { cause?: Error; code: number }[] = [];
    const e = (engine = await started((cause, code) => crashes.push({ cause, code })));
    let tokens = 0;
    const inFlight = e.generate({ id: 'long', model: entry.id, prompt: { text: 'Once upon a time' }, sampling: { ...sampling, max_tokens: 1_500 } }, () => {
      if (++tokens === 3) writeFileSync(fault, 'crash');
    });
    const err = await inFlight.then(() => undefined, (x: unknown) => x);
    expect(err).toBeInstanceOf(EngineError);
    expect(err).toMatchObject({ code: 'engine_crashed' });
    expect((err as EngineError).retryAfter).toBeGreaterThan(0);
    expect(crashes).toHaveLength(1);
    expect(crashes[0]!.code).toBe(1);
    expect(crashes[0]!.cause?.message).toContain('boom: the test crashed the engine worker');
    // The fresh worker loads the same model again and answers.
    await modelsSettled(e);
    const next = await e.generate({ id: 'next', model: entry.id, prompt: { text: 'Hello' }, sampling: { ...sampling, max_tokens: 4 } }, () => undefined);
    expect(next.completion_tokens).toBe(4);
  }, 120_000);

  it('is ended by terminate() after its grace even while its thread is stuck', async () => {
    const e = (engine = await started());
    writeFileSync(fault, 'block');
    await new Promise((r) => setTimeout(r, 300)); // the worker takes the fault
    const t0 = Date.now();
    await e.terminate(300);
    expect(Date.now() - t0).toBeLessThan(3_000);
    engine = undefined;
  }, 60_000);
});
