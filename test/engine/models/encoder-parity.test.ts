// The BERT-style encoder with token_type_ids (tiny-embed): Hearth's vectors equal
// transformers.js's feature-extraction pipeline with mean pooling and normalisation.
import { join } from 'node:path';
import { env, pipeline } from '@huggingface/transformers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeBackend } from '../../../src/backends/node.js';
import { createEngine } from '../../../src/engine/engine.js';
import type { EngineApi } from '../../../src/engine/protocol.js';
import { fixtures } from '../../helpers/fixtures.js';

let dir: string;
let engine: EngineApi;

beforeAll(async () => {
  dir = await fixtures();
  engine = createEngine(nodeBackend('cpu'));
  await engine.load([{ id: 'svc/tiny-embed', task: 'embedding', class: 't', context_length: 512, source: join(dir, 'tiny-embed'), price: { input_per_1m: 0, output_per_1m: 0 } }]);
  for (let i = 0; i < 200 && (await engine.models())[0]!.status === 'starting'; i++) await new Promise((r) => setTimeout(r, 50));
}, 60_000);
afterAll(() => engine?.dispose());

describe('encoder parity', () => {
  it("gives transformers.js's mean-pooled, normalised vectors for a batch of different lengths", async () => {
    const inputs = ['a short one', 'a rather longer sentence about rivers and stones'];
    env.localModelPath = `${dir}/`;
    env.allowRemoteModels = false;
    const extract = await pipeline('feature-extraction', 'tiny-embed', { device: 'cpu', dtype: 'fp32', local_files_only: true });
    try {
      const ref = (await extract(inputs, { pooling: 'mean', normalize: true })).tolist() as number[][];
      const vectors = (await engine.embed({ model: 'svc/tiny-embed', input: inputs })).data.map((v) => Array.from(v));
      expect(vectors.map((v) => v.length)).toEqual([1536, 1536]);
      vectors.forEach((v, i) => v.forEach((x, d) => expect(x).toBeCloseTo(ref[i]![d]!, 5)));
    } finally {
      await extract.dispose();
    }
  });
});
