// The GGUF writer (models/gguf): ggml's block formats, a file llama.cpp reads, the fixture's
// tokenizer as llama.cpp's, and the parity proof: the bench model's F32 GGUF run in llama.cpp
// (node-llama-cpp's prebuilt CPU binary, nothing built or downloaded) greedy-decodes the tokens
// Hearth's fp32 ONNX graph of the same weights decodes, with the same next-token logits.
import * as ort from 'onnxruntime-node';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getLlama, LlamaLogLevel, readGgufFileInfo, type Llama, type LlamaContextSequence, type LlamaModel, type Token } from 'node-llama-cpp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { benchChat, fixtureTokenizer, tinyChat } from '../../models/index.js';
import { GGUF_TYPES, permuteRotary, transpose, writeLlamaGguf, type LlamaGgufType } from '../../models/gguf/llama.js';
import { dequantize, quantizeQ4_0, quantizeQ8_0, roundToHalf } from '../../models/gguf/writer.js';
import { buildLlamaGraph } from '../../models/llama/graph.js';
import type { LlamaWeights } from '../../models/llama/weights.js';
import { argmax } from '../../models/reference.js';
import { ALL_PROMPTS, chatPrompt, encoder, runLlama } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'hearth-gguf-'));
let llama: Llama;
beforeAll(async () => {
  llama = await getLlama({ gpu: false, build: 'never', skipDownload: true, progressLogs: false, logLevel: LlamaLogLevel.error });
});
afterAll(async () => {
  await llama?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

/** Log-softmax: llama.cpp hands out the softmax of the raw logits, so logits compare up to their free constant. */
function logSoftmax(logits: ArrayLike<number>): Float64Array {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) max = Math.max(max, logits[i]!);
  let z = 0;
  for (let i = 0; i < logits.length; i++) z += Math.exp(logits[i]! - max);
  const lse = max + Math.log(z);
  return Float64Array.from(logits as ArrayLike<number>, (v) => v - lse);
}

/** Largest |log p − log q| over the tokens either side gives more than e^-20. */
function maxLogProbDiff(ours: Float64Array, theirs: Map<Token, number>): number {
  let m = 0;
  for (const [tok, p] of theirs) {
    const lp = Math.log(p);
    if (lp > -20 || ours[tok]! > -20) m = Math.max(m, Math.abs(lp - ours[tok]!));
  }
  return m;
}

/** Greedy decode in llama.cpp from prompt ids: the tokens, and the next-token distribution at each step. */
async function llamaCppGreedy(seq: LlamaContextSequence, prompt: number[], steps: number) {
  const tokens: number[] = [];
  const dists: Map<Token, number>[] = [];
  let input: number[] = prompt;
  for (let n = 0; n < steps; n++) {
    const res = await seq.controlledEvaluate(input.map((t, i) => (i === input.length - 1 ? [t as Token, { generateNext: { token: true, probabilities: true } }] : (t as Token))));
    const next = res[input.length - 1]!.next;
    tokens.push(next.token!);
    dists.push(next.probabilities!);
    input = [next.token!];
  }
  return { tokens, dists };
}

/** The same greedy decode on Hearth's fp32 ONNX graph of the weights. */
async function onnxGreedy(session: ort.InferenceSession, w: LlamaWeights, prompt: number[], steps: number) {
  const c = w.config;
  const tokens: number[] = [];
  const logits: Float64Array[] = [];
  let out = await runLlama(session, c, [prompt], [prompt.map(() => 1)], [prompt.map((_, i) => i)]);
  let len = prompt.length;
  for (let n = 0; n < steps; n++) {
    const l = out.logits[0]!.at(-1)!;
    const tok = argmax(l);
    tokens.push(tok);
    logits.push(logSoftmax(l));
    out = await runLlama(session, c, [[tok]], [Array(len + 1).fill(1)], [[len]], out.present);
    len++;
  }
  return { tokens, logits };
}

/** bench-chat's weights and Hearth's fp32 ONNX graph of them, built once for the tests that need them. */
let bench: Promise<{ w: LlamaWeights; session: ort.InferenceSession }> | undefined;
const benchModel = () => (bench ??= (async () => {
  const w = benchChat();
  return { w, session: await ort.InferenceSession.create(buildLlamaGraph(w)) };
})());
afterAll(async () => (await bench)?.session.release());

async function loadGguf(w: LlamaWeights, type: LlamaGgufType, name: string): Promise<LlamaModel> {
  const path = join(dir, `${name}-${type}.gguf`);
  writeLlamaGguf(path, w, fixtureTokenizer(), type, { name });
  return llama.loadModel({ modelPath: path });
}

describe('GGUF block formats', () => {
  it('Q4_0: fp16 d = (largest-magnitude value) / −8, 16 bytes of nibbles, element j low and j+16 high, value (q − 8)·d', () => {
    // Values on the grid of d = 0.25 whose largest magnitude is −2 (= −8·d): each code is exact.
    const x = Float32Array.from({ length: 32 }, (_, j) => ((j * 7) % 16 - 8) * 0.25);
    x[5] = -2;
    const bytes = quantizeQ4_0(x);
    expect(bytes.length).toBe(18);
    expect(new DataView(bytes.buffer).getUint16(0, true)).toBe(0x3400); // 0.25 in fp16
    for (let j = 0; j < 16; j++) {
      expect(bytes[2 + j]! & 15, `low nibble ${j}`).toBe(x[j]! / 0.25 + 8);
      expect(bytes[2 + j]! >> 4, `high nibble ${j}`).toBe(x[16 + j]! / 0.25 + 8);
    }
    expect(Array.from(dequantize('Q4_0', bytes))).toEqual(Array.from(x));
  });

  it('Q8_0: fp16 d = max|x| / 127, then 32 int8 codes; every value within d/2 of its code', () => {
    const x = Float32Array.from({ length: 64 }, (_, j) => Math.sin(j * 1.7) * (j < 32 ? 3 : 0.01));
    const bytes = quantizeQ8_0(x);
    expect(bytes.length).toBe(68);
    const back = dequantize('Q8_0', bytes);
    for (let b = 0; b < 2; b++) {
      const amax = Math.max(...Array.from(x.subarray(b * 32, b * 32 + 32), Math.abs));
      const d = roundToHalf(amax / 127);
      expect(Math.max(...Array.from(bytes.subarray(b * 34 + 2, b * 34 + 34), (v) => Math.abs((v << 24) >> 24)))).toBe(127);
      for (let j = 0; j < 32; j++) expect(Math.abs(back[b * 32 + j]! - x[b * 32 + j]!)).toBeLessThanOrEqual(d / 2 + 127 * Math.abs(d - amax / 127));
    }
  });

  it('Q4_0 of random weights: each value within d/2 of its code, but for codes clamped at 15 (within d)', () => {
    const x = Float32Array.from({ length: 32 * 50 }, (_, i) => (Math.sin(i * 12.9898) * 43758.5453) % 1);
    const back = dequantize('Q4_0', quantizeQ4_0(x));
    for (let b = 0; b < 50; b++) {
      let max = 0;
      for (let j = 0; j < 32; j++) if (Math.abs(x[b * 32 + j]!) > Math.abs(max)) max = x[b * 32 + j]!;
      const d = max / -8;
      const slack = 8 * Math.abs(roundToHalf(d) - d);
      for (let j = 0; j < 32; j++) {
        const v = x[b * 32 + j]!;
        const clamped = v / d + 8.5 >= 16;
        expect(Math.abs(back[b * 32 + j]! - v)).toBeLessThanOrEqual((clamped ? Math.abs(d) : Math.abs(d) / 2) + slack);
      }
    }
  });

  it('permutes q/k rows from rotate-half to interleaved rotary order, as convert_hf_to_gguf.py does', () => {
    // One head of D = 4 over in = 1: rows [a0, a1, b0, b1] (pairs a_i, b_i) become [a0, b0, a1, b1].
    expect(Array.from(permuteRotary(Float32Array.of(10, 11, 20, 21, 30, 31, 40, 41), 2, 4, 1))).toEqual([10, 20, 11, 21, 30, 40, 31, 41]);
    expect(Array.from(transpose(Float32Array.of(1, 2, 3, 4, 5, 6), 2, 3))).toEqual([1, 4, 2, 5, 3, 6]);
  });
});

describe('the fixture models as GGUF in llama.cpp', () => {
  it('writes GGUF v3 files llama.cpp reads as architecture llama, with ggml shapes and types', async () => {
    const w = tinyChat().weights;
    const c = w.config;
    for (const type of GGUF_TYPES) {
      const path = join(dir, `tiny-chat-${type}.gguf`);
      writeLlamaGguf(path, w, fixtureTokenizer(), type);
      const info = await readGgufFileInfo(path, { logWarnings: false });
      expect(info.version).toBe(3);
      expect(info.metadata.general.architecture).toBe('llama');
      const md = info.metadata as unknown as { llama: Record<string, unknown>; tokenizer: { ggml: Record<string, unknown> } };
      expect(md.llama.block_count).toBe(c.layers);
      expect(md.tokenizer.ggml.model).toBe('gpt2');
      const tensors = new Map(info.tensorInfo!.map((t) => [t.name, t]));
      expect(tensors.size).toBe(3 + 9 * c.layers);
      expect(tensors.get('blk.0.attn_q.weight')!.dimensions.map(Number)).toEqual([c.hidden, c.heads * c.headDim]);
      expect(tensors.get('blk.1.ffn_down.weight')!.dimensions.map(Number)).toEqual([c.intermediate, c.hidden]);
      expect(tensors.get('token_embd.weight')!.dimensions.map(Number)).toEqual([c.hidden, c.vocabSize]);
      const ggmlType = { F32: 0, F16: 1, Q4_0: 2, Q8_0: 8 }[type];
      expect(tensors.get('output.weight')!.ggmlType).toBe(ggmlType);
      expect(tensors.get('blk.0.attn_norm.weight')!.ggmlType).toBe(0);
    }
    expect(statSync(join(dir, 'tiny-chat-Q4_0.gguf')).size).toBeLessThan(statSync(join(dir, 'tiny-chat-Q8_0.gguf')).size);
  });

  it("tokenizes every fixture prompt as Hearth's BPE does (gpt2 tokenizer, special tokens parsed)", async () => {
    const model = await loadGguf(tinyChat().weights, 'F32', 'tiny-chat-tok');
    const enc = encoder();
    for (const p of ALL_PROMPTS) {
      const ids = enc.encode(p);
      expect(Array.from(model.tokenize(p, true)), p).toEqual(ids);
      expect(model.detokenize(ids as Token[], true)).toBe(p);
    }
    await model.dispose();
  });

  it("bench-chat in F32: llama.cpp greedy-decodes Hearth's fp32 ONNX tokens, next-token log-probs within 1e-3", async () => {
    const { w, session } = await benchModel();
    const model = await loadGguf(w, 'F32', 'bench-chat');
    // The KV cache in F32, so that only the weights and the arithmetic order differ.
    const context = await model.createContext({ contextSize: 512, threads: 2, experimentalKvCacheKeyType: 'F32', experimentalKvCacheValueType: 'F32' });
    const enc = encoder();
    let worst = 0;
    for (const prompt of [chatPrompt('Write a long essay about the sea.'), 'The capital of France is']) {
      const ids = enc.encode(prompt);
      const seq = context.getSequence();
      const ours = await onnxGreedy(session, w, ids, 12);
      const theirs = await llamaCppGreedy(seq, ids, 12);
      expect(theirs.tokens, prompt).toEqual(ours.tokens);
      ours.logits.forEach((l, i) => (worst = Math.max(worst, maxLogProbDiff(l, theirs.dists[i]!))));
      seq.dispose();
    }
    expect(worst).toBeLessThan(1e-3); // about 1e-4 here
    await context.dispose();
    await model.dispose();
  }, 60_000);

  it("bench-chat in F16, Q8_0 and Q4_0: the same weights within each format's rounding (log-prob error F16 < Q8_0 < Q4_0 < 1)", async () => {
    const { w, session } = await benchModel();
    const ids = encoder().encode(chatPrompt('Tell me a story about a cat and a dog.'));
    const ours = await onnxGreedy(session, w, ids, 1);
    const errors: Record<string, number> = {};
    for (const type of ['F16', 'Q8_0', 'Q4_0'] as const) {
      const model = await loadGguf(w, type, 'bench-chat');
      const context = await model.createContext({ contextSize: 256, threads: 2 });
      const theirs = await llamaCppGreedy(context.getSequence(), ids, 1);
      errors[type] = maxLogProbDiff(ours.logits[0]!, theirs.dists[0]!);
      await context.dispose();
      await model.dispose();
    }
    // Each format's error, as quantization makes it: a wrong block layout or scale gives errors of several units.
    // Here: F16 about 0.001, Q8_0 0.03, Q4_0 0.45.
    expect(errors.F16).toBeLessThan(0.01);
    expect(errors.Q8_0).toBeLessThan(0.1);
    expect(errors.Q4_0).toBeLessThan(1);
    expect(errors.F16!).toBeLessThan(errors.Q8_0!);
    expect(errors.Q8_0!).toBeLessThan(errors.Q4_0!);
  }, 60_000);
});
