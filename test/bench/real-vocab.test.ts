// The real-vocabulary bench's comparison with llama.cpp (bench/real-vocab.ts): each figure
// against llama.cpp's best thread count for that figure, and issue 30's CPU targets marked.
import { describe, expect, it } from 'vitest';
import { againstLlamaCpp, bestOf } from '../../bench/real-vocab.js';

const run = (b1: number, dec: number, c8: number, c16: number) => ({ batch1_tokens_per_s: b1, batch1_decode_tokens_per_s: dec, concurrent_tokens_per_s: { 8: c8, 16: c16 } });
const hearth = (agg: number, decode: number, host: number) => ({ aggregate_tokens_per_s: agg, per_stream_decode_tokens_per_s: decode, step_breakdown: { host_ms_per_row: host } });

describe("llama.cpp's best thread count", () => {
  it('takes each figure at the thread count that gives its best, and says which', () => {
    const best = bestOf({ 1: run(40, 42, 90, 100), 2: run(30, 31, 120, 95) });
    expect(best.batch1_tokens_per_s).toBe(40);
    expect(best.concurrent_tokens_per_s).toEqual({ 8: 120, 16: 100 });
    expect(best.threads).toEqual({ batch1: 1, batch1_decode: 1, concurrent_8: 2, concurrent_16: 1 });
  });
});

describe('Hearth against llama.cpp on a real vocabulary', () => {
  const q4 = bestOf({ 1: run(40, 42, 90, 100), 2: run(30, 31, 120, 95) });

  it('divides Hearth by llama.cpp at one stream and at each concurrency, and marks the targets', () => {
    const { vsLlama, targets } = againstLlamaCpp({ 1: hearth(32, 35, 0.08), 8: hearth(130, 17, 0.05), 16: hearth(150, 10, 0.12) }, q4);
    expect(vsLlama['1 stream']).toEqual({ hearth: 32, llama_cpp: 40, llama_cpp_threads: 1, ratio: 0.8 });
    expect(vsLlama['8 concurrent']).toEqual({ hearth: 130, llama_cpp: 120, llama_cpp_threads: 2, ratio: 1.08 });
    expect(vsLlama['16 concurrent']!.ratio).toBe(1.5);
    expect(targets).toEqual({
      'real vocab: host time <= 0.1 ms a row (1 stream)': true,
      'real vocab: host time <= 0.1 ms a row (8 streams)': true,
      'real vocab: host time <= 0.1 ms a row (16 streams)': false,
      'real vocab: q4 >= 0.8x llama.cpp Q4_0 at one stream': true,
      'real vocab: q4 >= 1.0x llama.cpp Q4_0 at 8 concurrent': true,
    });
  });

  it('leaves a target unmarked (null) where a figure is missing, rather than failing it', () => {
    const { targets } = againstLlamaCpp({ 8: hearth(100, 13, 0.2) }, undefined);
    expect(targets['real vocab: q4 >= 0.8x llama.cpp Q4_0 at one stream']).toBeNull();
    expect(targets['real vocab: q4 >= 1.0x llama.cpp Q4_0 at 8 concurrent']).toBeNull();
    expect(targets['real vocab: host time <= 0.1 ms a row (8 streams)']).toBe(false);
  });
});
