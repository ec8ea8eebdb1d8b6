// The graph edit that makes a prefill return one row of logits per prompt: on exports of
// each form the fixtures hold (plain, onnxruntime-genai's fused, float16 and 4-bit, weights
// inside or in external data), each right-padded row's logits at the position asked for are
// the whole graph's logits there; graphs that already keep the last positions, or whose
// lm_head is not where the edit knows to look, are left alone.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ortWeb from 'onnxruntime-web';
import { beforeAll, describe, expect, it } from 'vitest';
import { nodeBackend } from '../../../src/backends/node.js';
import { createModelSession } from '../../../src/engine/models/files.js';
import { LOGITS_POSITION_INPUT, logitsPositionEdit, pickLogitsPosition } from '../../../src/engine/models/logits-pick.js';
import { GraphBuilder, TensorType } from '../../../src/onnx/graph.js';
import { largestDifference, logitsRows, promptRows, rightPaddedFeeds } from '../../helpers/decoder-feeds.js';
import { exportEntry, exportFixtures } from '../../helpers/exports.js';

let fixtures: string;
beforeAll(async () => {
  fixtures = await exportFixtures();
}, 600_000);

const backend = nodeBackend('cpu');
const entry = (name: string, dtype: string) => exportEntry(fixtures, name, dtype);

// Rows of 9, 3 and 6 tokens padded on the right; the first two want their last token's
// logits, the third a position inside its prompt (not its last).
const ROWS = promptRows([9, 3, 6]);
const POSITIONS = [[8], [2], [3]];

describe('logits at one position per row, added at load', () => {
  it.each([
    ['llama3-export', 'fp32', 1e-5, 'plain, tied lm_head, weights in model.onnx_data'],
    ['gemma2-export', 'fp32', 1e-5, 'plain, soft-capped logits (Div, Tanh, Mul after lm_head)'],
    ['llama3_2-fused-export', 'fp32', 1e-5, "onnxruntime-genai's fused form (GroupQueryAttention, no position_ids)"],
    ['llama3_2-fused-export', 'q4f16', 1e-2, 'fused, MatMulNBits lm_head, float16 activations and logits'],
    ['phi3-export', 'q4f16', 1e-2, 'plain, MatMulNBits lm_head between Casts, float16 logits'],
  ])('%s %s: each row gives the whole graph’s logits at its position, within %s (%s)', async (name, dtype, tolerance) => {
    const whole = await createModelSession(backend, join(fixtures, name), entry(name, dtype));
    const picked = await createModelSession(backend, join(fixtures, name), entry(name, dtype), [], logitsPositionEdit);
    expect(whole.inputNames).not.toContain(LOGITS_POSITION_INPUT);
    expect(picked.inputNames).toContain(LOGITS_POSITION_INPUT);

    const all = (await whole.run(rightPaddedFeeds(backend.Tensor, whole, ROWS))).logits!;
    const one = (await picked.run(rightPaddedFeeds(backend.Tensor, picked, ROWS, POSITIONS))).logits!;
    const [B, , V] = all.dims;
    expect(one.dims).toEqual([B, 1, V]);
    const [at, got] = [logitsRows(all), logitsRows(one)];
    POSITIONS.forEach(([p], b) => expect(largestDifference(got(b, 0), at(b, p)), `row ${b}`).toBeLessThanOrEqual(tolerance));
    // The position is the one asked for: row 2's last token has other logits.
    expect(largestDifference(got(2, 0), at(2, 5))).toBeGreaterThan(100 * tolerance);
  });

  it.each([
    ['llama3-export', 'fp32', 1e-5],
    ['llama3_2-fused-export', 'q4f16', 1e-2],
  ])('%s %s: several positions per row (a speculative step verifying its drafts) give the whole graph’s logits at each', async (name, dtype, tolerance) => {
    const whole = await createModelSession(backend, join(fixtures, name), entry(name, dtype));
    const picked = await createModelSession(backend, join(fixtures, name), entry(name, dtype), [], logitsPositionEdit);
    const positions = [[5, 6, 7, 8], [0, 1, 2, 2], [2, 3, 4, 5]];
    const all = logitsRows((await whole.run(rightPaddedFeeds(backend.Tensor, whole, ROWS))).logits!);
    const some = (await picked.run(rightPaddedFeeds(backend.Tensor, picked, ROWS, positions))).logits!;
    expect(some.dims.slice(0, 2)).toEqual([3, 4]);
    const got = logitsRows(some);
    positions.forEach((row, b) => row.forEach((p, j) => expect(largestDifference(got(b, j), all(b, p)), `row ${b}, position ${p}`).toBeLessThanOrEqual(tolerance)));
  });

  it('declares the new input as int64 [batch, positions] and logits as [batch, positions, vocab]', async () => {
    const picked = await createModelSession(backend, join(fixtures, 'llama3-export'), entry('llama3-export', 'fp32'), [], logitsPositionEdit);
    const input = picked.inputMetadata.find((m) => m.name === LOGITS_POSITION_INPUT) as unknown as { type: string; shape: unknown[] };
    expect(input.type).toBe('int64');
    expect(input.shape).toEqual(['batch_size', 'hearth_positions']);
    const logits = picked.outputMetadata.find((m) => m.name === 'logits') as unknown as { shape: unknown[] };
    expect(logits.shape).toEqual(['batch_size', 'hearth_positions', 128256]);
  });

  it('loads in onnxruntime-web with its weights given through externalData, as the browser backend does', async () => {
    const folder = join(fixtures, 'llama3-export/onnx');
    const edited = logitsPositionEdit(readFileSync(join(folder, 'model.onnx')))!;
    ortWeb.env.wasm.numThreads = 1;
    const session = await ortWeb.InferenceSession.create(edited, {
      executionProviders: ['wasm'],
      externalData: [{ path: 'model.onnx_data', data: new Uint8Array(readFileSync(join(folder, 'model.onnx_data'))) }],
    });
    try {
      const whole = await createModelSession(backend, join(fixtures, 'llama3-export'), entry('llama3-export', 'fp32'));
      const all = logitsRows((await whole.run(rightPaddedFeeds(backend.Tensor, whole, ROWS))).logits!);
      const one = (await session.run(rightPaddedFeeds(ortWeb.Tensor as never, session as never, ROWS, POSITIONS))).logits!;
      expect(one.dims).toEqual([3, 1, 128256]);
      POSITIONS.forEach(([p], b) => expect(largestDifference(logitsRows(one as never)(b, 0), all(b, p))).toBeLessThan(1e-4));
    } finally {
      await session.release();
    }
  });

  it('leaves a graph that has num_logits_to_keep alone', async () => {
    const bytes = readFileSync(join(fixtures, 'qwen3-export/onnx/model.onnx'));
    expect(pickLogitsPosition(bytes)).toEqual({ skipped: 'the graph already has num_logits_to_keep' });
    expect(logitsPositionEdit(bytes)).toBeNull();
    const session = await createModelSession(backend, join(fixtures, 'qwen3-export'), entry('qwen3-export', 'fp32'), [], logitsPositionEdit);
    expect(session.inputNames).toContain('num_logits_to_keep');
    expect(session.inputNames).not.toContain(LOGITS_POSITION_INPUT);
  });

  it('leaves an edited graph as it is', () => {
    const once = logitsPositionEdit(readFileSync(join(fixtures, 'tiny-chat/onnx/model.onnx')))!;
    expect(pickLogitsPosition(once)).toEqual({ skipped: `the graph already has ${LOGITS_POSITION_INPUT}` });
  });

  it('returns null for bytes that are not an ONNX file, leaving onnxruntime to say so', () => {
    expect(pickLogitsPosition(new TextEncoder().encode('{"not": "onnx"}'))).toEqual({ skipped: expect.stringMatching(/^the file could not be decoded/) });
  });

  it('returns null for a graph with no logits output (a decoder embedder)', () => {
    const bytes = readFileSync(join(fixtures, 'qwen3-embed-export/onnx/model.onnx'));
    expect(pickLogitsPosition(bytes)).toEqual({ skipped: 'the graph has no logits output' });
  });
});

/** hidden [batch, seq, 4] → `tail` → logits [batch, seq, 8]; `tail` gets the graph, the hidden state and a weight. */
function smallGraph(tail: (g: GraphBuilder, hidden: string, weight: string) => string, extraOutput?: (g: GraphBuilder) => void): Uint8Array {
  const g = new GraphBuilder('small');
  const hidden = g.input('hidden', TensorType.FLOAT, ['batch_size', 'sequence_length', 4]);
  const weight = g.weight('lm_head.weight', [4, 8], Float32Array.from({ length: 32 }, (_, i) => i / 32));
  g.output('logits', tail(g, hidden, weight), TensorType.FLOAT, ['batch_size', 'sequence_length', 8]);
  extraOutput?.(g);
  return g.toBytes();
}

describe('where lm_head cannot be found safely, the graph is left alone', () => {
  it('finds lm_head in the smallest graph that has one (the cases below differ from it in one thing)', () => {
    const result = pickLogitsPosition(smallGraph((g, h, w) => g.node('MatMul', [h, w], {}, 'product')));
    expect('bytes' in result && result.path.hidden).toBe('hidden');
  });

  it('returns null when the product’s weight is not a constant', () => {
    const bytes = smallGraph((g, h) => g.node('MatMul', [h, g.input('w', TensorType.FLOAT, [4, 8])], {}, 'product'));
    expect(logitsPositionEdit(bytes)).toBeNull();
    expect(pickLogitsPosition(bytes)).toEqual({ skipped: expect.stringMatching(/reads w, which is not a weight/) });
  });

  it('returns null when a value between lm_head and logits is also read elsewhere', () => {
    let product = '';
    const bytes = smallGraph(
      (g, h, w) => (product = g.node('MatMul', [h, w], {}, 'product')),
      (g) => g.output('product_sum', g.node('ReduceSum', [product, g.ints('axes', [1])], {}, 'summed'), TensorType.FLOAT, ['batch_size', 1, 8]),
    );
    expect(pickLogitsPosition(bytes)).toEqual({ skipped: expect.stringMatching(/product on lm_head's path is also read by ReduceSum/) });
  });

  it('returns null when something other than element-wise ops stands between lm_head and logits', () => {
    const bytes = smallGraph((g, h, w) => g.node('Reshape', [g.node('MatMul', [h, w], {}, 'product'), g.ints('shape', [0, 0, 8])], {}, 'reshaped'));
    expect(pickLogitsPosition(bytes)).toEqual({ skipped: expect.stringMatching(/Reshape node .* is not an element-wise op/) });
  });

  it('returns null when logits mix two hidden states', () => {
    const bytes = smallGraph((g, h, w) => {
      const other = g.input('other', TensorType.FLOAT, ['batch_size', 'sequence_length', 4]);
      return g.node('Add', [g.node('MatMul', [h, w], {}, 'a'), g.node('MatMul', [other, w], {}, 'b')], {}, 'sum');
    });
    expect(pickLogitsPosition(bytes)).toEqual({ skipped: expect.stringMatching(/reads 2 hidden states/) });
  });
});
