// The export-faithful fixtures (real tokenizers, real export interfaces) and
// transformers.js as the reference they are checked against.
import { AutoModelForCausalLM, AutoModelForSequenceClassification, AutoTokenizer, Tensor, env, type PreTrainedTokenizer } from '@huggingface/transformers';
import { FIXTURES_DIR, writeFixtures } from '../../models/index.js';
import { join } from 'node:path';
import type { CatalogEntry, ChatMessage } from '../../src/engine/protocol.js';

/** A catalog entry for one export fixture's file of `dtype` on the CPU. */
export const exportEntry = (fixtures: string, name: string, dtype: string): CatalogEntry => ({
  id: `svc/${name}`,
  task: 'chat',
  class: 'tiny',
  context_length: 4096,
  source: join(fixtures, name),
  dtype: { cpu: dtype },
  price: { input_per_1m: 0, output_per_1m: 0 },
});

/** Every (fixture, dtype) pair the export fixtures hold. */
export const EXPORT_VARIANTS = [
  ['llama3-export', 'fp32'],
  ['llama3-export', 'fp16'],
  ['llama3-export', 'q4'],
  ['llama3-export', 'q4f16'],
  ['llama3-export', 'q8'],
  ['qwen3-export', 'fp32'],
  ['qwen3-export', 'q4f16'],
  ['gemma3-export', 'fp32'],
  ['gemma3-export', 'fp16'],
  ['mistral-export', 'fp32'],
  ['mistral-export', 'q4'],
  ['gemma2-export', 'fp32'],
  ['gemma2-export', 'fp16'],
  ['phi3-export', 'fp32'],
  ['phi3-export', 'q4f16'],
  ['granite-export', 'fp32'],
  ['granite-export', 'q4'],
  ['smollm3-export', 'fp32'],
  ['smollm3-export', 'q4f16'],
  ['llama3_2-fused-export', 'fp32'],
  ['llama3_2-fused-export', 'q4'],
] as const;

/** Families whose chat template raises on a system message (it is left out of their parity prompts). */
export const NO_SYSTEM_ROLE = new Set(['mistral-export', 'gemma2-export']);

export async function exportFixtures(): Promise<string> {
  await writeFixtures({ preset: 'exports', ifMissing: true });
  return FIXTURES_DIR;
}

const tokenizers = new Map<string, Promise<PreTrainedTokenizer>>();

function useLocalFolders(): void {
  env.localModelPath = `${FIXTURES_DIR}/`;
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
}

/** Writes the export fixtures and points transformers.js at their folder, offline: a reference loads them by name. */
export async function transformersOnExports(): Promise<string> {
  await exportFixtures();
  useLocalFolders();
  return FIXTURES_DIR;
}

export function referenceTokenizer(name: string): Promise<PreTrainedTokenizer> {
  useLocalFolders();
  if (!tokenizers.has(name)) tokenizers.set(name, AutoTokenizer.from_pretrained(name, { local_files_only: true }));
  return tokenizers.get(name)!;
}

/** transformers.js's prompt ids: apply_chat_template(messages, {add_generation_prompt: true}). */
export async function referencePromptIds(name: string, messages: ChatMessage[], kwargs: Record<string, unknown> = {}): Promise<number[]> {
  const tok = await referenceTokenizer(name);
  const ids = tok.apply_chat_template(messages as never, { ...kwargs, add_generation_prompt: true, return_dict: false, return_tensor: false }) as number[];
  return ids.map(Number);
}

/** transformers.js's greedy continuation of each prompt (new tokens only), on the same file and device. */
export async function referenceGreedy(name: string, dtype: string, prompts: ChatMessage[][], maxNewTokens: number): Promise<number[][]> {
  useLocalFolders();
  const model = await AutoModelForCausalLM.from_pretrained(name, { dtype: dtype as never, device: 'cpu', local_files_only: true });
  try {
    const out: number[][] = [];
    for (const messages of prompts) {
      const ids = await referencePromptIds(name, messages);
      const input_ids = new Tensor('int64', BigInt64Array.from(ids, BigInt), [1, ids.length]);
      const attention_mask = new Tensor('int64', new BigInt64Array(ids.length).fill(1n), [1, ids.length]);
      const seq = (await model.generate({ input_ids, attention_mask, max_new_tokens: maxNewTokens, do_sample: false } as never)) as { data: BigInt64Array };
      out.push(Array.from(seq.data.slice(ids.length), Number));
    }
    return out;
  } finally {
    await model.dispose();
  }
}


/**
 * transformers.js's scores of `pairs` on a cross-encoder fixture: the CrossEncoder `activation`
 * over AutoModelForSequenceClassification's logits for the tokenizer's padded pair encoding
 * (truncated as its tokenizer truncates, the tail of the pair: keep pairs within the context),
 * and each pair's tokens, special tokens included, as its attention mask counts them.
 */
export async function referenceScores(name: string, pairs: [string, string][], activation: (logit: number) => number): Promise<{ scores: number[]; tokens: number[] }> {
  const tok = await referenceTokenizer(name);
  const model = await AutoModelForSequenceClassification.from_pretrained(name, { dtype: 'fp32', device: 'cpu', local_files_only: true });
  try {
    const inputs = tok(pairs.map(([a]) => a), { text_pair: pairs.map(([, b]) => b), padding: true, truncation: true });
    const { logits } = (await model(inputs)) as { logits: Tensor };
    const mask = inputs.attention_mask as Tensor;
    const width = mask.dims[1]!;
    const flags = Array.from(mask.data as BigInt64Array, Number);
    return {
      scores: Array.from(logits.data as Float32Array, activation),
      tokens: pairs.map((_, i) => flags.slice(i * width, (i + 1) * width).reduce((a, b) => a + b, 0)),
    };
  } finally {
    await model.dispose();
  }
}
