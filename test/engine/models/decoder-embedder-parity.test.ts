// A decoder embedder's export (Qwen3-Embedding's interface: Qwen3Model with last_hidden_state
// out and an empty KV in, 1_Pooling/config.json's lasttoken mode, left padding, EOS appended
// by the tokenizer): Hearth's vectors equal transformers.js's feature-extraction pipeline with
// last-token pooling and normalisation, on the same folder, file and device.
import { join } from 'node:path';
import { env, pipeline } from '@huggingface/transformers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeBackend } from '../../../src/backends/node.js';
import { createEngine } from '../../../src/engine/engine.js';
import { validateCheckpoint } from '../../../src/engine/models/files.js';
import type { EngineApi } from '../../../src/engine/protocol.js';
import { exportFixtures, referenceTokenizer } from '../../helpers/exports.js';

const NAME = 'qwen3-embed-export';
const DTYPES = ['fp32', 'fp16', 'q8'] as const;
const INPUTS = ['a short one', 'a rather longer sentence about rivers and stones', 'rivers'];
let dir: string;
let engine: EngineApi;

beforeAll(async () => {
  dir = await exportFixtures();
  engine = createEngine(nodeBackend('cpu'));
  const price = { input_per_1m: 0, output_per_1m: 0 };
  const entry = (id: string, source: string, dtype = 'fp32') => ({ id, task: 'embedding' as const, class: 't', context_length: 512, source: join(dir, source), dtype: { cpu: dtype }, price });
  // A chat export (logits, no last_hidden_state) served as an embedder: failed, not ready.
  await engine.load([...DTYPES.map((dtype) => entry(`svc/${dtype}`, NAME, dtype)), entry('svc/chat-export', 'qwen3-export')]);
  for (let i = 0; i < 400 && (await engine.models()).some((m) => m.status === 'starting'); i++) await new Promise((r) => setTimeout(r, 50));
  expect((await engine.models()).filter((m) => m.status !== 'ready').map((m) => m.id)).toEqual(['svc/chat-export']);
}, 60_000);
afterAll(() => engine?.dispose());

describe.each(DTYPES)('decoder embedder parity, %s', (dtype) => {
  it("gives transformers.js's last-token, normalised vectors for a batch of different lengths", async () => {
    env.localModelPath = `${dir}/`;
    env.allowRemoteModels = false;
    const extract = await pipeline('feature-extraction', NAME, { device: 'cpu', dtype, local_files_only: true });
    try {
      // A float16 last_hidden_state is widened first: Node 20 has no Float16Array, and
      // transformers.js would pool and normalise the raw float16 bits.
      const ref = (
        dtype === 'fp32'
          ? await extract(INPUTS, { pooling: 'last_token', normalize: true })
          : (await extract(INPUTS, { pooling: 'none' })).to('float32').slice(null, -1).normalize(2, -1)
      ).tolist() as number[][];
      const r = await engine.embed({ model: `svc/${dtype}`, input: INPUTS });
      const vectors = r.data.map((v) => Array.from(v));
      expect(vectors.map((v) => v.length)).toEqual([16, 16, 16]);
      vectors.forEach((v, i) => v.forEach((x, d) => expect(x).toBeCloseTo(ref[i]![d]!, dtype === 'fp16' ? 2 : 5)));
      // Each input's usage counts the EOS its tokenizer appends, as transformers.js's encoding does.
      const tok = await referenceTokenizer(NAME);
      const lengths = INPUTS.map((t) => tok.encode(t));
      expect(lengths.every((ids) => ids.at(-1) === 151643)).toBe(true);
      expect(r.prompt_tokens).toBe(lengths.reduce((n, ids) => n + ids.length, 0));
    } finally {
      await extract.dispose();
    }
  });
});

describe('a decoder embedder checkpoint', () => {
  it('is found to be an embedding model from its 1_Pooling folder', async () => {
    expect(await validateCheckpoint(nodeBackend('cpu'), join(dir, NAME))).toMatchObject({ model_type: 'qwen3', task: 'embedding' });
  });

  it('is failed, naming the missing output, when the graph is a causal LM export', async () => {
    const state = (await engine.models()).find((m) => m.id === 'svc/chat-export')!;
    expect(state).toMatchObject({ status: 'failed' });
    expect(state.detail).toContain('no output "last_hidden_state"');
  });
});

describe('decoder embedder batching', () => {
  it('gives each input the vector it gets alone (left padding does not leak into the last token)', async () => {
    const together = (await engine.embed({ model: 'svc/fp32', input: INPUTS })).data;
    for (const [i, text] of INPUTS.entries()) {
      const [alone] = (await engine.embed({ model: 'svc/fp32', input: [text] })).data;
      Array.from(alone!).forEach((x, d) => expect(x).toBeCloseTo(together[i]![d]!, 5));
    }
  });

  it('gives different texts different vectors', async () => {
    const [a, b] = (await engine.embed({ model: 'svc/fp32', input: ['rivers', 'stones'] })).data;
    expect(Array.from(a!).reduce((s, x, d) => s + x * b![d]!, 0)).toBeLessThan(0.999);
  });
});
