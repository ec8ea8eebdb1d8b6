// A tiny random-weight Qwen2.5-VL in the layout of onnx-community's transformers.js export, the
// twin of qwen2vl.ts (whose pieces it reuses): the same three ONNX files,
//   onnx/embed_tokens.onnx      input_ids int64 [batch, seq] → inputs_embeds float32 [batch, seq, hidden];
//   onnx/vision_encoder.onnx    pixel_values float32 [num_patches, 3·2·14·14] and image_grid_thw int64
//                               [num_images, 3] (Qwen2_5_VLForConditionalGeneration's image_grid_thw_name:
//                               the Qwen2-VL export calls it grid_thw) → image_features [num_patches / 4, hidden];
//   onnx/decoder_model_merged.onnx  inputs_embeds, attention_mask, position_ids int64 [3, batch, seq],
//                               past_key_values.{i}.key|value → logits, present.{i}.key|value,
// with Qwen2.5-VL-3B-Instruct's config.json as transformers ≥ 4.5x writes it, scaled down: model_type
// qwen2_5_vl, the text model only in `text_config` (model_type qwen2_5_vl_text, rope_scaling with
// mrope_section there; transformers.js 4.3 reads qwen2_5_vl's text parameters from text_config
// alone), the vision token ids and vision_config (depth, hidden_size, intermediate_size,
// out_hidden_size, window_size 112, fullatt_block_indexes, silu, tokens_per_second …) at the top;
// Qwen2VLImageProcessor's preprocessor_config.json for Qwen2_5_VLProcessor with qwen2vl.ts's small
// bounds (at most 64 image tokens), written out in full as save_pretrained writes it; Qwen2.5-VL's
// chat template (Qwen2-VL's, word for word: QWEN2VL_TEMPLATE); its generation_config.json.
//
// The text model is qwen2vl.ts's (the Llama decoder with M-RoPE, no q/k/v biases), with the 3B's
// proportions scaled down: grouped-query attention 4:1, head_dim 16 (mrope_section [2, 3, 3], the 3B's
// [16, 24, 24] of 64), lm_head untied (the 3B ties it to the embedding; the export's decoder holds its
// own lm_head either way, and the 7B's is untied). vocab_size is padded past the tokenizer, to a
// multiple of 128, as the real 151,936 pads 151,665.
//
// The vision tower is reduced as qwen2vl.ts's is, to what keeps each patch on its own: no attention,
// so no window attention either (the real tower reorders the patches into 112-pixel windows for its
// window-attention blocks and back before the features leave; with per-patch ops, and merge groups
// kept whole by that reorder, the reorder changes nothing, and no rotary either). What is kept is
// Qwen2.5-VL's: the Linear patch embedding (its Conv3d, no bias), blocks of RMSNorm then the SwiGLU
// MLP (down(silu(gate(x)) · up(x)), biases, residual; the attention half and norm1 left out), and its
// PatchMerger: RMSNorm ln_q per patch, each merge group's four patches concatenated, Linear → GELU →
// Linear to the text hidden size. image_grid_thw is read (its sum, times zero, joins the features),
// so the session lists it as the export's does.
//
// The tokenizer is qwen2vl.ts's cut of Qwen2's byte-level BPE, followed by Qwen2.5-VL's 22 added
// tokens in Qwen's order and flags (Qwen2-VL's 14, then <tool_call> … <|file_sep|>, not special).
import type { GraphBuilder } from '../../src/onnx/graph.js';
import { concatChunks, encodeModel } from '../../src/onnx/proto.js';
import type { FixtureFiles } from '../llama/fixture.js';
import type { LlamaWeights } from '../llama/weights.js';
import { Rng } from '../rng.js';
import {
  BASE_VOCAB,
  decoderGraph,
  dense,
  embedTokensGraph,
  json,
  QWEN2VL_DIMS,
  QWEN2VL_TEMPLATE,
  qwenTokenizerJson,
  qwenVisionEncoderGraph,
  qwenVlPreprocessor,
  qwenVlTextWeights,
  qwenVlTokenizerFiles,
  type AddedToken,
} from './qwen2vl.js';

/** The fixture's shapes: Qwen2.5-VL-3B's layout, scaled down. */
export const QWEN25VL_DIMS = {
  text: { hidden: 64, layers: 2, heads: 4, kvHeads: 1, headDim: 16, intermediate: 128, ropeTheta: 1000000, rmsEps: 1e-6, maxPositions: 128000 },
  mropeSection: [2, 3, 3] as const,
  /** vision_config: the 3B's 32 blocks of 1280 (full attention in 7, 15, 23, 31), SwiGLU 3420, out 2048. */
  vision: {
    depth: 2,
    hiddenSize: 32,
    intermediate: 64,
    heads: 2,
    inChans: 3,
    patchSize: 14,
    spatialMergeSize: 2,
    temporalPatchSize: 2,
    windowSize: 112,
    fullattBlockIndexes: [1],
    tokensPerSecond: 2,
    rmsEps: 1e-6,
  },
  minPixels: QWEN2VL_DIMS.minPixels,
  maxPixels: QWEN2VL_DIMS.maxPixels,
} as const;

/** Qwen2.5-VL's 22 added tokens: Qwen2.5's (151643–151664 in Qwen's ids), with their flags. */
const QWEN25_ADDED = { first: 151643, count: 22 };

let added: readonly AddedToken[] | undefined;

/** Qwen2.5-VL's added tokens from BASE_VOCAB on, as Qwen's from 151643 (read from the tokenizer once). */
export function qwen25vlAddedTokens(): readonly AddedToken[] {
  return (added ??= qwenTokenizerJson()
    .added_tokens.filter((t) => t.id >= QWEN25_ADDED.first && t.id < QWEN25_ADDED.first + QWEN25_ADDED.count)
    .map((t) => ({ ...t, id: BASE_VOCAB + t.id - QWEN25_ADDED.first })));
}

/** Ids of the added tokens. */
export function qwen25vlTokenIds(): Record<string, number> {
  return Object.fromEntries(qwen25vlAddedTokens().map((t) => [t.content, t.id]));
}

/** The tokenizer's ids: the cut vocabulary and the added tokens. */
export const QWEN25VL_TOKENIZER_SIZE = BASE_VOCAB + QWEN25_ADDED.count;

/** config.json's vocab_size: the tokenizer's ids padded to a multiple of 128 (the rows past it never win: zero lm_head columns). */
export const QWEN25VL_VOCAB = Math.ceil(QWEN25VL_TOKENIZER_SIZE / 128) * 128;

/** RMSNorm (Qwen2RMSNorm): x / √(mean(x²) + eps) · weight. */
function rmsNorm(g: GraphBuilder, x: string, n: number, eps: number, name: string): string {
  const sq = g.node('Mul', [x, x], {}, `${name}.sq`);
  const mean = g.node('ReduceMean', [sq], { axes: [-1], keepdims: 1 }, `${name}.mean`);
  const std = g.node('Sqrt', [g.node('Add', [mean, g.scalar(`${name}.eps`, eps)], {}, `${name}.var`)], {}, `${name}.std`);
  return g.node('Mul', [g.node('Div', [x, std], {}, `${name}.normed`), g.weight(`${name}.weight`, [n], new Float32Array(n).fill(1))], {}, `${name}.out`);
}

/** silu(x) = x·σ(x): Qwen2.5-VL's vision hidden_act. */
const silu = (g: GraphBuilder, x: string, name: string) => g.node('Mul', [x, g.node('Sigmoid', [x], {}, `${name}.sig`)], {}, `${name}.out`);

/** vision_encoder.onnx: pixel_values [num_patches, PATCH_DIM], image_grid_thw [num_images, 3] → image_features [num_patches / 4, text hidden]. */
export function qwen25vlVisionEncoderGraph(rng: Rng): GraphBuilder {
  const { vision: v, text } = QWEN25VL_DIMS;
  const E = v.hiddenSize;
  return qwenVisionEncoderGraph(rng, {
    name: 'qwen2_5_vl_vision',
    gridInput: 'image_grid_thw',
    embedDim: E,
    depth: v.depth,
    merge: v.spatialMergeSize ** 2,
    outHidden: text.hidden,
    // Qwen2_5_VLVisionBlock without its attention half: norm2, then Qwen2_5_VLMLP (gate, up, down, biases), residual.
    block: (g, x, i, r) => {
      const L = `blocks.${i}`;
      const h = rmsNorm(g, x, E, v.rmsEps, `${L}.norm2`);
      const gate = silu(g, dense(g, h, `${L}.mlp.gate_proj`, E, v.intermediate, r, true), `${L}.mlp.act_fn`);
      const up = dense(g, h, `${L}.mlp.up_proj`, E, v.intermediate, r, true);
      const down = dense(g, g.node('Mul', [gate, up], {}, `${L}.mlp.gated`), `${L}.mlp.down_proj`, v.intermediate, E, r, true);
      return g.node('Add', [x, down], {}, `${L}.resid_mlp`);
    },
    norm: (g, x, name) => rmsNorm(g, x, E, v.rmsEps, name),
  });
}

/** The text model's weights (qwenVlTextWeights): every added and padding id's lm_head column zero, so greedy replies are always text. */
export function qwen25vlTextWeights(seed: number): LlamaWeights {
  return qwenVlTextWeights(seed, QWEN25VL_DIMS.text, QWEN25VL_VOCAB);
}

/** The fixture folder's files. */
export function qwen25vlFixtureFiles(seed: number): FixtureFiles {
  const { text, vision, mropeSection, minPixels, maxPixels } = QWEN25VL_DIMS;
  const tok = qwenVlTokenizerFiles({ added: qwen25vlAddedTokens(), processorClass: 'Qwen2_5_VLProcessor', modelMaxLength: 131072 });
  const ids = qwen25vlTokenIds();
  const w = qwen25vlTextWeights(seed);
  const config = {
    architectures: ['Qwen2_5_VLForConditionalGeneration'],
    image_token_id: ids['<|image_pad|>'],
    model_type: 'qwen2_5_vl',
    text_config: {
      attention_dropout: 0.0,
      bos_token_id: ids['<|endoftext|>'],
      eos_token_id: ids['<|im_end|>'],
      hidden_act: 'silu',
      hidden_size: text.hidden,
      initializer_range: 0.02,
      intermediate_size: text.intermediate,
      layer_types: Array.from({ length: text.layers }, () => 'full_attention'),
      max_position_embeddings: text.maxPositions,
      max_window_layers: 70,
      model_type: 'qwen2_5_vl_text',
      num_attention_heads: text.heads,
      num_hidden_layers: text.layers,
      num_key_value_heads: text.kvHeads,
      rms_norm_eps: text.rmsEps,
      rope_scaling: { mrope_section: [...mropeSection], rope_type: 'default', type: 'default' },
      rope_theta: text.ropeTheta,
      sliding_window: 32768,
      tie_word_embeddings: false,
      use_cache: true,
      use_sliding_window: false,
      vocab_size: w.config.vocabSize,
    },
    torch_dtype: 'float32',
    transformers_version: '4.56.1',
    video_token_id: ids['<|video_pad|>'],
    vision_config: {
      depth: vision.depth,
      fullatt_block_indexes: [...vision.fullattBlockIndexes],
      hidden_act: 'silu',
      hidden_size: vision.hiddenSize,
      in_channels: vision.inChans,
      in_chans: vision.inChans,
      initializer_range: 0.02,
      intermediate_size: vision.intermediate,
      model_type: 'qwen2_5_vl',
      num_heads: vision.heads,
      out_hidden_size: text.hidden,
      patch_size: vision.patchSize,
      spatial_merge_size: vision.spatialMergeSize,
      spatial_patch_size: vision.patchSize,
      temporal_patch_size: vision.temporalPatchSize,
      tokens_per_second: vision.tokensPerSecond,
      window_size: vision.windowSize,
    },
    vision_end_token_id: ids['<|vision_end|>'],
    vision_start_token_id: ids['<|vision_start|>'],
    vision_token_id: ids['<|vision_pad|>'],
  };
  // Qwen2.5-VL-3B-Instruct's generation_config.json: near-greedy sampling and a repetition penalty
  // (transformers.js applies it in generate(); references of Hearth's greedy pass repetition_penalty 1).
  const generation = {
    bos_token_id: ids['<|endoftext|>'],
    pad_token_id: ids['<|endoftext|>'],
    do_sample: true,
    eos_token_id: [ids['<|im_end|>'], ids['<|endoftext|>']],
    repetition_penalty: 1.05,
    temperature: 0.1,
    top_p: 0.001,
    top_k: 1,
    transformers_version: '4.49.0.dev0',
  };
  return {
    'config.json': json(config),
    'generation_config.json': json(generation),
    'preprocessor_config.json': json(qwenVlPreprocessor('Qwen2_5_VLProcessor', vision, minPixels, maxPixels)),
    'chat_template.json': json({ chat_template: QWEN2VL_TEMPLATE }),
    'tokenizer.json': tok.json,
    'tokenizer_config.json': tok.config,
    'onnx/embed_tokens.onnx': embedTokensGraph(w).toBytes(),
    // The vision tower's own stream, so the text weights are those of qwen25vlTextWeights(seed).
    'onnx/vision_encoder.onnx': qwen25vlVisionEncoderGraph(new Rng(seed + 1)).toBytes(),
    'onnx/decoder_model_merged.onnx': concatChunks(encodeModel(decoderGraph(w, mropeSection, 'qwen2_5_vl_text'))),
  };
}
