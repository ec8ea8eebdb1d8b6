// Shared by the model tests: the fixtures (written once, reused), prompts and an
// onnxruntime runner for the Llama graph.
import * as ort from 'onnxruntime-node';
import { join } from 'node:path';
import { FIXTURES_DIR, fixtureTokenizer, writeFixtures } from '../../models/index.js';
import type { LlamaConfig } from '../../models/llama/weights.js';
import { BpeEncoder } from '../../models/tokenizer/bpe.js';

export async function fixturesDir(): Promise<string> {
  await writeFixtures({ ifMissing: true });
  return FIXTURES_DIR;
}

export const encoder = () => new BpeEncoder(fixtureTokenizer());

export const chatPrompt = (user: string, system?: string) =>
  (system ? `<|im_start|>system\n${system}<|im_end|>\n` : '') + `<|im_start|>user\n${user}<|im_end|>\n<|im_start|>assistant\n`;

export const USER_MESSAGES = [
  'Hello!',
  'What is the capital of France?',
  'Tell me a story about a cat and a dog.',
  'How are you today?',
  'Write a poem about the sea',
  'Explain how the sun makes light.',
  'Why is the sky blue?',
  'I like green tea',
  'Good morning',
  'What time is it?',
  'Can you help me with my project?',
  'Summarize the history of the world in one line.',
  'Translate "good night" into French.',
  'List three colors.',
  'hi',
  '?',
  'Is 42 the answer?',
  'Café au lait, s’il vous plaît 😀',
  'Write a haiku about rain in the city',
  'My name is Anna and I live in a small town by the river.',
];

export const RAW_PROMPTS = [
  'The',
  'Hello',
  'Once upon',
  'The capital of France is',
  'The cat sat on the mat',
  'In the morning the sun comes up',
  'Water is good for you',
  'Many years ago there was a king',
  'def main():',
  '1, 2, 3,',
  'The market went up today, and prices were',
  'She has a new book about',
  'x',
  '!!',
  'Music and art make people',
  'Before you leave, please close the',
  'One day the little fox found',
  'Science helps us understand',
  'Where do you live?',
  '日本語のテキスト',
  'naïve café',
  'assistant',
  'The stock market and the price of gold',
  'Good morning to all of you, and welcome.',
  'We went to the market to buy some',
  'If you want to learn, you should',
  'Computers can do many things',
  'Her name was Anna and she loved to',
  'Tell me about',
  'A language model predicts the next word',
];

export const ALL_PROMPTS = [
  ...USER_MESSAGES.map((m) => chatPrompt(m)),
  chatPrompt('What is the weather like?', 'You are a helpful assistant.'),
  chatPrompt('Tell me a joke', 'Answer briefly.'),
  ...RAW_PROMPTS,
];

export async function llamaSession(name: string): Promise<ort.InferenceSession> {
  return ort.InferenceSession.create(join(await fixturesDir(), name, 'onnx', 'model.onnx'));
}

const i64 = (a: readonly number[], dims: number[]) => new ort.Tensor('int64', BigInt64Array.from(a.map(BigInt)), dims);

export interface LlamaStep {
  /** logits [batch][position][vocab] */
  logits: Float32Array[][];
  present: Record<string, ort.Tensor>;
}

/** One run of the Llama graph; `past` (present.* of an earlier run) may be omitted. */
export async function runLlama(
  s: ort.InferenceSession,
  c: LlamaConfig,
  ids: number[][],
  mask: number[][],
  positions: number[][],
  past?: Record<string, ort.Tensor>,
): Promise<LlamaStep> {
  const B = ids.length;
  const S = ids[0]!.length;
  const feeds: Record<string, ort.Tensor> = {
    input_ids: i64(ids.flat(), [B, S]),
    attention_mask: i64(mask.flat(), [B, mask[0]!.length]),
    position_ids: i64(positions.flat(), [B, S]),
  };
  for (let i = 0; i < c.layers; i++) {
    for (const kv of ['key', 'value']) {
      feeds[`past_key_values.${i}.${kv}`] = past?.[`present.${i}.${kv}`] ?? new ort.Tensor('float32', new Float32Array(0), [B, c.kvHeads, 0, c.headDim]);
    }
  }
  const out = await s.run(feeds);
  const data = out.logits!.data as Float32Array;
  const V = c.vocabSize;
  const logits = Array.from({ length: B }, (_, b) => Array.from({ length: S }, (_, t) => data.subarray((b * S + t) * V, (b * S + t + 1) * V)));
  const present: Record<string, ort.Tensor> = {};
  for (const [k, v] of Object.entries(out)) if (k.startsWith('present.')) present[k] = v;
  return { logits, present };
}

export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}
