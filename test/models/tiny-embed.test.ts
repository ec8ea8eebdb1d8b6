// tiny-embed: 1536-dimensional outputs whose pooled vectors rank similar texts closer.
import * as ort from 'onnxruntime-node';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { encoder, fixturesDir } from './helpers.js';

let session: ort.InferenceSession;
const enc = encoder();

beforeAll(async () => {
  session = await ort.InferenceSession.create(join(await fixturesDir(), 'tiny-embed', 'onnx', 'model.onnx'));
});

/** Mean pooling over attention_mask and L2 normalisation, as the engine does. */
async function embed(texts: string[]): Promise<Float32Array[]> {
  const ids = texts.map((t) => enc.encode(t));
  const S = Math.max(...ids.map((x) => x.length));
  const flat = (f: (row: number[], i: number) => number) => BigInt64Array.from(ids.flatMap((row) => Array.from({ length: S }, (_, i) => BigInt(f(row, i)))));
  const out = await session.run({
    input_ids: new ort.Tensor('int64', flat((r, i) => r[i] ?? 509), [ids.length, S]),
    attention_mask: new ort.Tensor('int64', flat((r, i) => (i < r.length ? 1 : 0)), [ids.length, S]),
    token_type_ids: new ort.Tensor('int64', flat(() => 0), [ids.length, S]),
  });
  const h = out.last_hidden_state!;
  const D = h.dims[2]!;
  const data = h.data as Float32Array;
  return ids.map((row, b) => {
    const v = new Float32Array(D);
    for (let t = 0; t < row.length; t++) for (let d = 0; d < D; d++) v[d]! += data[(b * S + t) * D + d]! / row.length;
    const n = Math.hypot(...v);
    return v.map((x) => x / n);
  });
}

const cos = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);

describe('the tiny-embed fixture', () => {
  it('outputs last_hidden_state of 1536 dimensions per token', async () => {
    expect(session.outputNames).toEqual(['last_hidden_state']);
    const out = await session.run({
      input_ids: new ort.Tensor('int64', BigInt64Array.from([1n, 2n, 3n]), [1, 3]),
      attention_mask: new ort.Tensor('int64', BigInt64Array.from([1n, 1n, 1n]), [1, 3]),
      token_type_ids: new ort.Tensor('int64', BigInt64Array.from([0n, 0n, 0n]), [1, 3]),
    });
    expect(out.last_hidden_state!.dims).toEqual([1, 3, 1536]);
  });

  it('ranks similar words and sentences closer than unrelated ones', async () => {
    const [cat, cats, stock] = await embed(['cat', 'cats', 'stock market prices']);
    expect(cos(cat!, cats!)).toBeGreaterThan(cos(cat!, stock!));
    const [s1, s2, s3] = await embed(['The cat sat on the mat', 'A cat was sitting on a mat', 'stock market prices went up']);
    expect(cos(s1!, s2!)).toBeGreaterThan(cos(s1!, s3!));
    expect(cos(s1!, s2!)).toBeGreaterThan(cos(s2!, s3!));
  });

  it('pools the same vector for a text alone and padded in a batch', async () => {
    const [alone] = await embed(['hello world']);
    const [padded] = await embed(['hello world', 'a much longer sentence that forces padding of the first']);
    expect(cos(alone!, padded!)).toBeGreaterThan(0.9999);
  });
});
