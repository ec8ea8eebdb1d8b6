// Embeddings in micro-batches (src/engine/embed-batches.ts): bounded runs, longest first,
// results in input order and equal to each input embedded alone, one run of a model at a time.
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { Rng } from '../../models/rng.js';
import { nodeBackend } from '../../src/backends/node.js';
import { embedInBatches, microBatches } from '../../src/engine/embed-batches.js';
import { DecoderEmbedder } from '../../src/engine/models/decoder-embedder.js';
import { Encoder, type Embedder } from '../../src/engine/models/encoder.js';
import type { CatalogEntry } from '../../src/engine/protocol.js';
import { exportFixtures } from '../helpers/exports.js';
import { fixtures } from '../helpers/fixtures.js';

/** The real embedder, its runs recorded: the rows of each, and how many ran at once at most. */
class Watched implements Embedder {
  runs: number[][] = [];
  #now = 0;
  most = 0;
  constructor(readonly inner: Embedder) {}
  async embed(batch: number[][]): Promise<Float32Array[]> {
    this.runs.push(batch.map((ids) => ids.length));
    this.most = Math.max(this.most, ++this.#now);
    try {
      return await this.inner.embed(batch);
    } finally {
      this.#now--;
    }
  }
  dispose = () => this.inner.dispose();
}

/** `count` token sequences of 1 to `longest` ids in a shuffled order of lengths. */
function sequences(count: number, longest: number, vocab: number, seed: number): number[][] {
  const rng = new Rng(seed);
  return Array.from({ length: count }, () => Array.from({ length: 1 + rng.int(longest) }, () => 1 + rng.int(vocab - 1)));
}

const entry = (source: string): CatalogEntry => ({ id: 'svc/e', task: 'embedding', class: 't', context_length: 512, source, dtype: { cpu: 'fp32' }, price: { input_per_1m: 0, output_per_1m: 0 } });
const backend = nodeBackend('cpu');
let encoder: Embedder;
let decoder: Embedder;

beforeAll(async () => {
  const tiny = join(await fixtures(), 'tiny-embed');
  const qwen = join(await exportFixtures(), 'qwen3-embed-export');
  encoder = await Encoder.load(backend, tiny, entry(tiny));
  decoder = await DecoderEmbedder.load(backend, qwen, entry(qwen));
  return async () => {
    await encoder.dispose();
    await decoder.dispose();
  };
}, 60_000);

describe('microBatches', () => {
  it('groups the indices longest first, every index once, each group within the rows and the padded tokens', () => {
    const lengths = [3, 40, 7, 7, 100, 1, 12, 40, 2, 9];
    const batches = microBatches(lengths, { rows: 3, tokens: 90 });
    expect(batches.flat().sort((a, b) => a - b)).toEqual(lengths.map((_, i) => i));
    expect(batches.flat().map((i) => lengths[i])).toEqual([...lengths].sort((a, b) => b - a));
    for (const b of batches) {
      const width = Math.max(...b.map((i) => lengths[i]!));
      expect(b.length).toBeLessThanOrEqual(3);
      if (b.length > 1) expect(b.length * width).toBeLessThanOrEqual(90);
    }
    // The 100-token row is longer than the token bound: it runs alone.
    expect(batches[0]).toEqual([4]);
  });
});

describe.each([
  ['a BERT-style encoder (tiny-embed)', () => encoder, 512],
  ['a decoder embedder (Qwen3-Embedding export, left-padded)', () => decoder, 151669],
] as const)('embedInBatches on %s', (_name, embedder, vocab) => {
  it('returns, in input order, what each input embedded alone gives, for inputs of mixed length', async () => {
    const ids = sequences(45, 48, vocab, 31);
    const watched = new Watched(embedder());
    const batched = await embedInBatches(watched, ids, { rows: 8, tokens: 160 });
    expect(watched.runs.length).toBeGreaterThan(6);
    for (const rows of watched.runs) {
      expect(rows.length).toBeLessThanOrEqual(8);
      if (rows.length > 1) expect(rows.length * Math.max(...rows)).toBeLessThanOrEqual(160);
    }
    expect(batched).toHaveLength(ids.length);
    for (let i = 0; i < ids.length; i++) {
      const [alone] = await embedder().embed([ids[i]!]);
      expect(batched[i]!.length).toBe(alone!.length);
      batched[i]!.forEach((x, d) => expect(x).toBeCloseTo(alone![d]!, 5));
    }
  });

  it('runs the batches of concurrent requests one at a time, each request getting its own vectors', async () => {
    const a = sequences(20, 30, vocab, 7);
    const b = sequences(20, 30, vocab, 8);
    const watched = new Watched(embedder());
    const [x, y] = await Promise.all([embedInBatches(watched, a, { rows: 4, tokens: 64 }), embedInBatches(watched, b, { rows: 4, tokens: 64 })]);
    expect(watched.most).toBe(1);
    const [x0, y0] = [(await embedder().embed([a[0]!]))[0]!, (await embedder().embed([b[0]!]))[0]!];
    x[0]!.forEach((v, d) => expect(v).toBeCloseTo(x0[d]!, 5));
    y[0]!.forEach((v, d) => expect(v).toBeCloseTo(y0[d]!, 5));
  });
});
