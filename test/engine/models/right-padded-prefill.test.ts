// CausalLM's grouped prefill on a GroupQueryAttention graph, whose rows are prefixes padded
// on the right: each row's logits and cache are what the row gets alone, whether the rows
// run together (first prompts, or one token each after a past) or, where onnxruntime
// refuses them together (several tokens after a past), one after another.
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { nodeBackend } from '../../../src/backends/node.js';
import type { SeqKv } from '../../../src/engine/kv/layout.js';
import { CausalLM } from '../../../src/engine/models/causal-lm.js';
import { wholeRow } from '../../../src/engine/models/logits-head.js';
import { exportFixtures } from '../../helpers/exports.js';

const NAME = 'llama3_2-fused-export';
let lm: CausalLM;

beforeAll(async () => {
  const dir = join(await exportFixtures(), NAME);
  const entry = { id: `svc/${NAME}`, task: 'chat' as const, class: 'tiny', context_length: 4096, source: dir, price: { input_per_1m: 0, output_per_1m: 0 } };
  lm = await CausalLM.load(nodeBackend('cpu'), dir, entry);
}, 60_000);

const tokens = (n: number, seed: number) => Array.from({ length: n }, (_, i) => 1000 + ((seed * 7919 + i * 104729) % 50000));
const argmax = (a: Float32Array) => a.reduce((best, v, i) => (v > a[best]! ? i : best), 0);
const close = (a: Float32Array, b: Float32Array) => {
  let most = 0;
  for (let i = 0; i < a.length; i++) most = Math.max(most, Math.abs(a[i]! - b[i]!));
  return most;
};

/** Row-by-row results to compare against: each prompt's past, then its chunk, alone. */
async function alone(pasts: number[][], chunks: number[][]) {
  const out = [];
  for (const [i, chunk] of chunks.entries()) {
    const past = pasts[i]!.length ? ((await lm.prefill(pasts[i]!, null)).kv as SeqKv) : null;
    out.push(await lm.prefill(chunk, past));
  }
  return out;
}

async function grouped(pasts: number[][], chunks: number[][]) {
  const items = [];
  for (const [i, chunk] of chunks.entries()) {
    const past = pasts[i]!.length ? ((await lm.prefill(pasts[i]!, null)).kv as SeqKv) : null;
    items.push({ tokens: chunk, past });
  }
  return lm.prefillMany(items);
}

async function expectSame(pasts: number[][], chunks: number[][]) {
  const a = await alone(pasts, chunks);
  const b = await grouped(pasts, chunks);
  for (const [i, r] of b.entries()) {
    const [mine, theirs] = [await wholeRow(r.logits), await wholeRow(a[i]!.logits)];
    expect(argmax(mine)).toBe(argmax(theirs));
    expect(close(mine, theirs)).toBeLessThan(1e-4);
    expect(r.kv.length).toBe(a[i]!.kv.length);
    expect(close((r.kv as SeqKv).data[0] as Float32Array, (a[i]!.kv as SeqKv).data[0] as Float32Array)).toBeLessThan(1e-5);
  }
}

describe('grouped prefill on a GroupQueryAttention graph', () => {
  it('runs first prompts of different lengths together, padded on the right, each as alone', async () => {
    await expectSame([[], [], []], [tokens(9, 1), tokens(3, 2), tokens(6, 3)]);
  });

  it('runs one new token after pasts of different lengths together, each as alone', async () => {
    await expectSame([tokens(7, 4), tokens(2, 5), []], [tokens(1, 6), tokens(1, 7), tokens(1, 8)]);
  });

  it('runs several new tokens after pasts row by row, as onnxruntime refuses them together, each as alone', async () => {
    await expectSame([tokens(7, 9), tokens(2, 10)], [tokens(4, 11), tokens(5, 12)]);
  });
});
