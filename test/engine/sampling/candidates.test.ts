// The sampling head (logits-head.ts) and the sampler's two sources: a row's best candidates
// from the head graph, or the whole row. The head's candidates are a full sort's first 64
// (ties by the lower id) and its normaliser is the row's; and over seeds and every sampling
// parameter, a draw from the candidates (with the whole row fetched where they cannot decide)
// is the whole-row sampler's token, with its logprobs.
import fc from 'fast-check';
import * as ort from 'onnxruntime-node';
import { describe, expect, it } from 'vitest';
import { nodeBackend } from '../../../src/backends/node.js';
import { floatToHalf } from '../../../src/onnx/half.js';
import { HEAD_CANDIDATES, LogitsHead } from '../../../src/engine/models/logits-head.js';
import { logSumExp, sampleToken, type SamplerParams } from '../../../src/engine/sampling/sampler.js';
import { halfToFloat } from '../../../src/engine/models/interface.js';
import { QWEN_VOCAB, rowsOf, runBest, runHead, sortedFirst, tiedRows } from '../../helpers/head-rows.js';

describe('the sampling head graph', () => {
  for (const type of ['float32', 'float16'] as const) {
    for (const topK of ['single', 'blocked'] as const) {
      it(`returns a full sort's first ${HEAD_CANDIDATES} of each row and its normaliser (${type} logits, ${topK} top-K, Qwen's vocabulary)`, async () => {
        const rows = 3;
        const raw = rowsOf(rows, QWEN_VOCAB, 7);
        // What the row is once in the model's type.
        const seen = type === 'float16' ? Float32Array.from(raw, (v) => halfToFloat(floatToHalf(v))) : raw;
        const invT = [1, 1 / 0.7, 1 / 1.5];
        const head = await runHead(raw, rows, QWEN_VOCAB, type, topK, invT);
        for (let r = 0; r < rows; r++) {
          const row = seen.subarray(r * QWEN_VOCAB, (r + 1) * QWEN_VOCAB);
          const ids = Array.from(head.indices.subarray(r * HEAD_CANDIDATES, (r + 1) * HEAD_CANDIDATES), Number);
          expect(ids).toEqual(sortedFirst(row, HEAD_CANDIDATES));
          expect(Array.from(head.values.subarray(r * HEAD_CANDIDATES, (r + 1) * HEAD_CANDIDATES))).toEqual(ids.map((i) => row[i]));
          expect(head.lse[r]).toBeCloseTo(logSumExp(row, 1 / invT[r]!), 3);
          expect(head.whole.subarray(r * QWEN_VOCAB, (r + 1) * QWEN_VOCAB)).toEqual(row);
        }
      }, 60_000);
    }
  }
});

describe("the sampling head's best token", () => {
  for (const [type, topK] of [['float32', 'single'], ['float16', 'single'], ['float32', 'blocked'], ['float16', 'blocked']] as const) {
    it(`is the row's maximum at its lowest id (${type} logits, Qwen's vocabulary, ${topK} form)`, async () => {
      const rows = 4;
      const raw = tiedRows(rows, QWEN_VOCAB, 11);
      const seen = type === 'float16' ? Float32Array.from(raw, (v) => halfToFloat(floatToHalf(v))) : raw;
      const best = await runBest(raw, rows, QWEN_VOCAB, type, 'cpu', topK);
      for (let r = 0; r < rows; r++) {
        const row = seen.subarray(r * QWEN_VOCAB, (r + 1) * QWEN_VOCAB);
        const [id] = sortedFirst(row, 1);
        expect(best[r]).toEqual([id, row[id!]]);
      }
    }, 60_000);
  }
});

describe('a draw from the candidates', () => {
  const vocab = 3000;
  const params = fc.record<SamplerParams>({
    temperature: fc.oneof(fc.constant(0), fc.double({ min: 0.05, max: 2, noNaN: true })),
    top_p: fc.oneof(fc.constant(1), fc.double({ min: 0.01, max: 1, noNaN: true })),
    top_k: fc.oneof(fc.constant(-1), fc.integer({ min: 1, max: 200 })),
    min_p: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 0.9, noNaN: true })),
    presence_penalty: fc.constant(0),
    frequency_penalty: fc.constant(0),
    logprobs: fc.oneof(fc.constant(-1), fc.integer({ min: 0, max: 20 })),
  });

  it('is the whole-row draw, token and logprobs, over seeds and sampling parameters', async () => {
    const head = await LogitsHead.open(nodeBackend('cpu'), vocab, 'float32');
    let fromCandidates = 0;
    let wholeRows = 0;
    await fc.assert(
      fc.asyncProperty(params, fc.integer({ min: 1, max: 2 ** 31 }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), fc.double({ min: 0.5, max: 12, noNaN: true }), async (p, seed, u, spread) => {
        // Peaked rows (the candidates decide) and flat ones (the draw often leaves them).
        const row = Float32Array.from(rowsOf(1, vocab, seed), (v) => (v * spread) / 6);
        const t = !(p.temperature >= 1e-6) ? 1 : p.temperature;
        const tensor = new ort.Tensor('float32', row, [1, 1, vocab]);
        // Greedy rows that ask no logprobs read the best token alone, as the engine has them.
        const bestOnly = !(p.temperature >= 1e-6) && p.logprobs < 0;
        const [candidates] = bestOnly ? await head.best(tensor as never, [0]) : await head.candidates(tensor as never, [0], [t]);
        const draw = () => u;
        const whole = sampleToken({ whole: row }, p, draw)!;
        let got = sampleToken({ candidates: candidates! }, p, draw);
        if (got) fromCandidates++;
        else {
          wholeRows++;
          got = sampleToken({ whole: (await head.whole(tensor as never, [0]))[0]! }, p, draw)!;
        }
        expect(got.id).toBe(whole.id);
        if (p.logprobs >= 0) {
          expect(got.logprob).toBeCloseTo(whole.logprob, 4);
          expect(got.top.map((x) => x.id)).toEqual(whole.top.map((x) => x.id));
          got.top.forEach((x, i) => expect(x.logprob).toBeCloseTo(whole.top[i]!.logprob, 4));
        }
      }),
      { numRuns: 400, seed: 20261127 },
    );
    await head.dispose();
    // Both paths were taken.
    expect(fromCandidates).toBeGreaterThan(100);
    expect(wholeRows).toBeGreaterThan(10);
  }, 120_000);
});
