// The tiny-chat ONNX graph computes the same logits as the plain-TypeScript reference pass.
import type * as ort from 'onnxruntime-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { fixtureTokenizer, tinyChat } from '../../models/index.js';
import { emptyCache, forward } from '../../models/reference.js';
import { chatPrompt, encoder, llamaSession, maxAbsDiff, runLlama } from './helpers.js';

const design = tinyChat();
const w = design.weights;
const c = w.config;
const enc = encoder();
const prompts = [chatPrompt('What is the capital of France?'), 'The cat sat on the mat', 'Hi', chatPrompt('Tell me a story', 'Be brief.')].map((p) => enc.encode(p));
const range = (n: number, from = 0) => Array.from({ length: n }, (_, i) => i + from);
let session: ort.InferenceSession;

beforeAll(async () => {
  session = await llamaSession('tiny-chat');
});

describe('the tiny-chat ONNX graph', () => {
  it('declares the input and output names transformers.js expects', () => {
    expect(session.inputNames).toEqual(['input_ids', 'attention_mask', 'position_ids', 'past_key_values.0.key', 'past_key_values.0.value', 'past_key_values.1.key', 'past_key_values.1.value']);
    expect([...session.outputNames].sort()).toEqual(['logits', 'present.0.key', 'present.0.value', 'present.1.key', 'present.1.value']);
  });

  it('matches the reference forward pass in one full pass', async () => {
    for (const ids of prompts) {
      const ref = forward(w, ids, range(ids.length));
      const out = await runLlama(session, c, [ids], [ids.map(() => 1)], [range(ids.length)]);
      ids.forEach((_, t) => expect(maxAbsDiff(out.logits[0]![t]!, ref[t]!)).toBeLessThan(1e-4));
    }
  });

  it('matches the reference when the prompt is prefilled and the rest fed token by token through the KV cache', async () => {
    for (const ids of prompts) {
      const split = Math.max(1, Math.floor(ids.length / 2));
      const ref = forward(w, ids, range(ids.length), emptyCache(w));
      let out = await runLlama(session, c, [ids.slice(0, split)], [range(split).map(() => 1)], [range(split)]);
      expect(maxAbsDiff(out.logits[0]![split - 1]!, ref[split - 1]!)).toBeLessThan(1e-4);
      for (let t = split; t < ids.length; t++) {
        out = await runLlama(session, c, [[ids[t]!]], [range(t + 1).map(() => 1)], [[t]], out.present);
        expect(out.present['present.0.key']!.dims).toEqual([1, c.kvHeads, t + 1, c.headDim]);
        expect(maxAbsDiff(out.logits[0]![0]!, ref[t]!)).toBeLessThan(1e-4);
      }
    }
  });

  it('matches the reference for a batch of two left-padded prompts, prefill and decode', async () => {
    const [a, b] = [prompts[0]!, prompts[1]!];
    const T = Math.max(a.length, b.length);
    const padId = fixtureTokenizer().specialIds['<|endoftext|>'];
    const pad = (ids: number[]) => [...Array<number>(T - ids.length).fill(padId), ...ids];
    const mask = (ids: number[]) => range(T).map((i) => (i < T - ids.length ? 0 : 1));
    const pos = (ids: number[]) => range(T).map((i) => Math.max(0, i - (T - ids.length)));
    const out = await runLlama(session, c, [pad(a), pad(b)], [mask(a), mask(b)], [pos(a), pos(b)]);
    for (const [row, ids] of [a, b].entries()) {
      const ref = forward(w, ids, range(ids.length));
      const off = T - ids.length;
      ids.forEach((_, t) => expect(maxAbsDiff(out.logits[row]![off + t]!, ref[t]!)).toBeLessThan(1e-4));
      for (const l of out.logits[row]!) for (const v of l) expect(Number.isFinite(v)).toBe(true);
    }
    // One decode step for both rows.
    const nextTok = [415, 273];
    const step = await runLlama(session, c, nextTok.map((t) => [t]), [[...mask(a), 1], [...mask(b), 1]], [[a.length], [b.length]], out.present);
    for (const [row, ids] of [a, b].entries()) {
      const ref = forward(w, [...ids, nextTok[row]!], range(ids.length + 1)).at(-1)!;
      expect(maxAbsDiff(step.logits[row]![0]!, ref)).toBeLessThan(1e-4);
    }
  });
});
