// POST /v1/embeddings served by a decoder embedder (the Qwen3-Embedding-shaped export) through
// the real router and engine, with the openai SDK: `dimensions` truncates the last-token vector
// and normalises it again, and usage counts the appended EOS.
import OpenAI from 'openai';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccess } from '../../src/access/access.js';
import { createMemoryStore } from '../../src/access/memory-store.js';
import { createRouter } from '../../src/api/router.js';
import { nodeBackend } from '../../src/backends/node.js';
import { createEngine } from '../../src/engine/engine.js';
import { createRuntime, modelsSettled } from '../../src/runtime.js';
import type { Runtime } from '../../src/types.js';
import { exportFixtures, referenceTokenizer } from '../helpers/exports.js';

const MODEL = 'svc/qwen3-embed';
let runtime: Runtime;
let client: OpenAI;

beforeAll(async () => {
  const dir = await exportFixtures();
  runtime = createRuntime({
    engine: createEngine(nodeBackend('cpu')),
    access: createAccess({ store: createMemoryStore(), acceptAnyWellFormedKey: true }),
    catalog: [{ id: MODEL, task: 'embedding', class: 'tiny', context_length: 512, source: join(dir, 'qwen3-embed-export'), price: { input_per_1m: 0, output_per_1m: 0 } }],
  });
  await modelsSettled(runtime.engine);
  const router = createRouter(runtime);
  client = new OpenAI({
    baseURL: 'http://hearth.test/v1',
    apiKey: `svc_live_${'a1B2'.repeat(8)}`,
    maxRetries: 0,
    fetch: async (url: RequestInfo | URL, init?: RequestInit) => router.fetch(new Request(url, init)),
  });
}, 60_000);
afterAll(() => runtime?.close());

const dot = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0);

describe('a decoder embedder behind /v1/embeddings', () => {
  it('returns unit vectors of the hidden size, one per input, with usage counting each EOS', async () => {
    const input = ['rivers', 'stones and rivers'];
    const r = await client.embeddings.create({ model: MODEL, input, encoding_format: 'float' });
    expect(r.data.map((d) => d.embedding.length)).toEqual([16, 16]);
    for (const d of r.data) expect(dot(d.embedding, d.embedding)).toBeCloseTo(1, 5);
    const tok = await referenceTokenizer('qwen3-embed-export');
    const plain = input.reduce((n, t) => n + tok.encode(t, { add_special_tokens: false }).length, 0);
    expect(r.usage.prompt_tokens).toBe(plain + input.length);
  });

  it('truncates to `dimensions` and normalises again (the SDK default base64 encoding)', async () => {
    const full = (await client.embeddings.create({ model: MODEL, input: 'rivers', encoding_format: 'float' })).data[0]!.embedding;
    const short = (await client.embeddings.create({ model: MODEL, input: 'rivers', dimensions: 8 })).data[0]!.embedding;
    expect(short).toHaveLength(8);
    const norm = Math.sqrt(dot(full.slice(0, 8), full.slice(0, 8)));
    short.forEach((x, i) => expect(x).toBeCloseTo(full[i]! / norm, 5));
  });

  it('refuses more dimensions than the model has, naming the field', async () => {
    const err = await client.embeddings.create({ model: MODEL, input: 'rivers', dimensions: 17 }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.param).toBe('dimensions');
  });
});
