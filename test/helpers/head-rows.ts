// Rows of logits for the sampling head's tests, and the head graph run on them through the
// backend as the engine opens it (on the CPU or on WebGPU).
import * as ort from 'onnxruntime-node';
import { nodeBackend } from '../../src/backends/node.js';
import { floatToHalf } from '../../src/onnx/half.js';
import { logitsHeadGraph, type HeadTopK } from '../../src/engine/models/logits-head.js';

export const QWEN_VOCAB = 151_936;

/** Rows of logits with ties (values on a grid) and a few peaks, as float32 values. */
export function rowsOf(rows: number, vocab: number, seed: number): Float32Array {
  let a = seed >>> 0;
  const next = () => ((a = (Math.imul(a, 1664525) + 1013904223) >>> 0) / 2 ** 32);
  return Float32Array.from({ length: rows * vocab }, () => Math.round((next() < 0.001 ? 8 : 0) + next() * 6 * 8) / 8);
}

/** A full sort's first k (logit descending, ties by id). */
export function sortedFirst(row: ArrayLike<number>, k: number): number[] {
  return Array.from({ length: row.length }, (_, i) => i).sort((x, y) => row[y]! - row[x]! || x - y).slice(0, k);
}

export async function runHead(values: Float32Array, rows: number, vocab: number, type: 'float32' | 'float16', topK: HeadTopK, invT: number[], device: 'cpu' | 'webgpu' = 'cpu') {
  // Through the backend, as the engine opens it (on Node 24 it feeds float16 as the binding reads it).
  const session = await nodeBackend(device).createSession(logitsHeadGraph(vocab, type, topK));
  const data = type === 'float16' ? Uint16Array.from(values, floatToHalf) : values;
  const out = await session.run({
    logits: new ort.Tensor(type, data, [rows, 1, vocab]),
    rows: new ort.Tensor('int64', BigInt64Array.from({ length: rows }, (_, i) => BigInt(i)), [rows]),
    inv_temperature: new ort.Tensor('float32', Float32Array.from(invT), [rows]),
  });
  await session.release();
  return { values: out.values!.data as Float32Array, indices: out.indices!.data as BigInt64Array, lse: out.lse!.data as Float32Array, whole: out.whole!.data as Float32Array };
}

/** The `best` graph's answer for each row: [id, value]. */
export async function runBest(values: Float32Array, rows: number, vocab: number, type: 'float32' | 'float16', device: 'cpu' | 'webgpu' = 'cpu', topK: HeadTopK = 'single'): Promise<[number, number][]> {
  const session = await nodeBackend(device).createSession(logitsHeadGraph(vocab, type, topK, 'best'));
  const data = type === 'float16' ? Uint16Array.from(values, floatToHalf) : values;
  const out = await session.run({
    logits: new ort.Tensor(type, data, [rows, 1, vocab]),
    rows: new ort.Tensor('int64', BigInt64Array.from({ length: rows }, (_, i) => BigInt(i)), [rows]),
  });
  await session.release();
  const ids = out.indices!.data as Float32Array;
  const vals = out.values!.data as Float32Array;
  return Array.from({ length: rows }, (_, r) => [ids[r]!, vals[r]!]);
}

/** Rows whose maximum is held by several ids (the lowest must win), then rowsOf's rows. */
export function tiedRows(rows: number, vocab: number, seed: number): Float32Array {
  const out = rowsOf(rows, vocab, seed);
  for (let r = 0; r < rows; r++) for (const at of [vocab - 1, 70_001 % vocab, 4_097 % vocab, 65 + r]) out[r * vocab + at] = 20;
  return out;
}
