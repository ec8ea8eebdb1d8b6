// A Llama decoder as onnxruntime-genai's model builder writes it for the CPU (and what many
// onnx-community WebGPU checkpoints are): com.microsoft ops with the rotary inside the
// attention, and the interface such exports have. Faithful to builder.py where it matters
// to a runner: input and output names, order (every key before every value) and shapes;
// no position_ids (GroupQueryAttention takes positions from seqlens_k); seqlens_k =
// ReduceSum(attention_mask) − 1 and total_sequence_length = the mask's width, both int32;
// one packed QKV MatMul per layer; SimplifiedLayerNormalization, then
// SkipSimplifiedLayerNormalization carrying the residual sum; the final norm a Skip one.
// q4f16 is the builder's int4 for WebGPU and CUDA (io_dtype float16): every activation, the
// KV cache, the logits, the norms' weights, the rotary caches and the int4 scales in float16.
import { GraphBuilder, TensorType } from '../../src/onnx/graph.js';
import { toHalfs } from '../../src/onnx/half.js';
import { inverseFrequencies, type LlamaWeights } from '../llama/weights.js';
import { quantizeNbits } from '../llama/quantize.js';

export interface FusedVariant {
  /**
   * fp32 MatMuls, or int4: MatMulNBits (block 32) and, embeddings shared with lm_head,
   * GatherBlockQuantized; q4 with float32 activations (the builder's `-p int4 -e cpu`), q4f16
   * with float16 activations, KV and logits (`-p int4 -e webgpu` or `-e cuda`).
   */
  weights?: 'fp32' | 'q4' | 'q4f16';
  /** MatMulNBits' accuracy_level (default 4, the builder's; 0 computes in float, as onnxruntime-web's WASM does anyway). */
  accuracyLevel?: number;
  /** lm_head the embedding transposed (Llama 3.2; the default), or a weight of its own (Llama 3, the bench model). */
  tiedEmbeddings?: boolean;
}

/** The builder's default int4 block size. */
export const FUSED_Q4_BLOCK = 32;
/** MatMulNBits' accuracy_level the builder sets for CPU and WebGPU int4 exports (int8 activations inside). */
const ACCURACY_LEVEL = 4;

const bytesOf = (a: ArrayBufferView) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

/** [rows, cols] row-major → [cols, rows]. */
function transpose(m: Float32Array, rows: number, cols: number): Float32Array {
  const t = new Float32Array(m.length);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) t[c * rows + r] = m[r * cols + c]!;
  return t;
}

/** The builder's cos/sin caches: [context, head_dim / 2], positions × inv_freq in float32. */
function rotaryCaches(w: LlamaWeights): { cos: Float32Array; sin: Float32Array } {
  const c = w.config;
  const inv = inverseFrequencies(c);
  const half = c.headDim / 2;
  const cos = new Float32Array(c.maxPositions * half);
  const sin = new Float32Array(c.maxPositions * half);
  for (let t = 0; t < c.maxPositions; t++) {
    for (let i = 0; i < half; i++) {
      const angle = Math.fround(t * inv[i]!);
      cos[t * half + i] = Math.cos(angle);
      sin[t * half + i] = Math.sin(angle);
    }
  }
  return { cos, sin };
}

export function fusedLlamaGraph(w: LlamaWeights, variant: FusedVariant = {}): GraphBuilder {
  const c = w.config;
  const { hidden: H, heads, kvHeads: KV, headDim: D, intermediate: I, vocabSize: V, layers } = c;
  const q4 = variant.weights === 'q4' || variant.weights === 'q4f16';
  // The builder's io_dtype: the type of every activation, the KV cache and the logits.
  const io = variant.weights === 'q4f16' ? TensorType.FLOAT16 : TensorType.FLOAT;
  const g = new GraphBuilder('main_graph');
  /** A float initializer in io_dtype (make_initializer(..., to=self.io_dtype)). */
  const floats = (name: string, dims: readonly number[], data: Float32Array): string =>
    io === TensorType.FLOAT ? g.weight(name, dims, data) : g.raw(name, dims, TensorType.FLOAT16, bytesOf(toHalfs(data)));

  /** x · W for W [K, N]: MatMul, or MatMulNBits on the quantized weight. */
  const matmul = (x: string, base: string, K: number, N: number, weight: Float32Array, out?: string): string => {
    if (!q4) return g.node('MatMul', [x, g.weight(`${base.slice(1).replaceAll('/', '.')}.weight`, [K, N], weight)], {}, out ?? `${base}/output_0`);
    const { packed, scales, blocks } = quantizeNbits(weight, K, N, FUSED_Q4_BLOCK);
    const name = `${base.slice(1).replaceAll('/', '.')}.weight`;
    const b = g.raw(`${name}_Q4`, [N, blocks, FUSED_Q4_BLOCK / 2], TensorType.UINT8, packed);
    const s = floats(`${name}_scales`, [N, blocks], scales);
    return g.contrib('MatMulNBits', [x, b, s], { K, N, bits: 4, block_size: FUSED_Q4_BLOCK, accuracy_level: variant.accuracyLevel ?? ACCURACY_LEVEL }, out ?? `${base}NBits/output_0`);
  };

  const inputIds = g.input('input_ids', TensorType.INT64, ['batch_size', 'sequence_length']);
  const mask = g.input('attention_mask', TensorType.INT64, ['batch_size', 'total_sequence_length']);
  const pastShape = ['batch_size', KV, 'past_sequence_length', D] as const;
  const pastKeys = Array.from({ length: layers }, (_, i) => g.input(`past_key_values.${i}.key`, io, pastShape));
  const pastValues = Array.from({ length: layers }, (_, i) => g.input(`past_key_values.${i}.value`, io, pastShape));

  // seqlens_k and total_sequence_length, as make_attention_mask_reformatting_for_gqa builds them.
  const m = '/model/attn_mask_reformat/attn_mask_subgraph';
  const one = g.ints('/model/constants/INT64/[1]', [1]);
  const sum = g.node('ReduceSum', [mask, one], { keepdims: 0 }, `${m}/ReduceSum/output_0`);
  const sub = g.node('Sub', [sum, g.ints('/model/constants/INT64/1', [1], [])], {}, `${m}/Sub/output_0`);
  const seqlensK = g.node('Cast', [sub], { to: TensorType.INT32 }, `${m}/Sub/Cast/output_0`);
  const shape = g.node('Shape', [mask], {}, `${m}/Shape/output_0`);
  const width = g.node('Gather', [shape, g.ints('/model/constants/INT64/1_index', [1], [])], { axis: 0 }, `${m}/Gather/output_0`);
  const totalLen = g.node('Cast', [width], { to: TensorType.INT32 }, `${m}/Gather/Cast/output_0`);

  // Embeddings: fp32 a Gather of their own; int4 shares lm_head's 4-bit weight (shared_embeddings)
  // when tied; untied, the embedding stays a float Gather and lm_head is a MatMul(NBits) of its own.
  const tied = variant.tiedEmbeddings ?? true;
  const lmHeadT = tied ? transpose(w.embed, V, H) : w.lmHead; // [H, V]
  let embedded: string;
  let lmHead: (x: string) => string;
  if (!q4 || !tied) {
    embedded = g.node('Gather', [floats('model.embed_tokens.weight', [V, H], w.embed), inputIds], {}, '/model/embed_tokens/Gather/output_0');
    lmHead = (x) => matmul(x, '/lm_head/MatMul', H, V, lmHeadT, 'logits');
  } else {
    const { packed, scales, blocks } = quantizeNbits(lmHeadT, H, V, FUSED_Q4_BLOCK);
    const b = g.raw('lm_head.MatMul.weight_Q4', [V, blocks, FUSED_Q4_BLOCK / 2], TensorType.UINT8, packed);
    const s = floats('lm_head.MatMul.weight_scales', [V, blocks], scales);
    const flat = g.node('Reshape', [b, g.ints(`/model/constants/INT64/[${V}, ${H / 2}]`, [V, H / 2])], {}, '/model/embed_tokens/Reshape/output_0');
    embedded = g.contrib('GatherBlockQuantized', [flat, inputIds, s], { bits: 4, block_size: FUSED_Q4_BLOCK, gather_axis: 0, quantize_axis: 1 }, '/model/embed_tokens/GatherBlockQuantized/output_0');
    lmHead = (x) => g.contrib('MatMulNBits', [x, b, s], { K: H, N: V, bits: 4, block_size: FUSED_Q4_BLOCK, accuracy_level: variant.accuracyLevel ?? ACCURACY_LEVEL }, 'logits');
  }

  const { cos, sin } = rotaryCaches(w);
  // In io_dtype: make_rotary_embedding_caches casts them to it (GroupQueryAttention requires it).
  const cosCache = floats('cos_cache', [c.maxPositions, D / 2], cos);
  const sinCache = floats('sin_cache', [c.maxPositions, D / 2], sin);

  /** SkipSimplifiedLayerNormalization: (normed, residual sum); the last one gives the normed output only. */
  const skipNorm = (root: string, skip: string, weight: string, base: string, last = false): [string, string] => {
    const outs = last ? [`${base}/output_0`] : [`${base}/output_0`, '', '', `${base}/output_3`];
    const [normed, , , sum3] = g.contribN('SkipSimplifiedLayerNormalization', [root, skip, weight], { epsilon: { float: c.rmsEps } }, outs);
    return [normed!, sum3 ?? ''];
  };

  let residual = embedded;
  let skip = '';
  for (let i = 0; i < layers; i++) {
    const L = w.layers[i]!;
    const p = `/model/layers.${i}`;
    const inputNorm = floats(`model.layers.${i}.input_layernorm.weight`, [H], L.inputNorm);
    let normed: string;
    if (i === 0) {
      normed = g.node('SimplifiedLayerNormalization', [residual, inputNorm], { axis: -1, epsilon: { float: c.rmsEps }, stash_type: 1 }, `${p}/input_layernorm/output_0`);
    } else {
      [normed, residual] = skipNorm(residual, skip, inputNorm, `${p}/input_layernorm/SkipLayerNorm`);
    }
    // Q, K and V in one MatMul: columns [q | k | v], as make_packed_matmul_float concatenates them.
    const qkvWeight = new Float32Array(H * (heads + 2 * KV) * D);
    for (let r = 0; r < H; r++) {
      qkvWeight.set(L.q.subarray(r * heads * D, (r + 1) * heads * D), r * (heads + 2 * KV) * D);
      qkvWeight.set(L.k.subarray(r * KV * D, (r + 1) * KV * D), r * (heads + 2 * KV) * D + heads * D);
      qkvWeight.set(L.v.subarray(r * KV * D, (r + 1) * KV * D), r * (heads + 2 * KV) * D + (heads + KV) * D);
    }
    const qkv = matmul(normed, `${p}/attn/qkv_proj/MatMul`, H, (heads + 2 * KV) * D, qkvWeight);
    const attnBase = `${p}/attn/GroupQueryAttention`;
    const [attn] = g.contribN(
      'GroupQueryAttention',
      [qkv, '', '', pastKeys[i]!, pastValues[i]!, seqlensK, totalLen, cosCache, sinCache],
      { num_heads: heads, kv_num_heads: KV, scale: { float: 1 / Math.sqrt(D) }, local_window_size: -1, softcap: { float: 0 }, do_rotary: 1, rotary_interleaved: 0 },
      [`${attnBase}/output_0`, `present.${i}.key`, `present.${i}.value`],
    );
    const attnOut = matmul(attn!, `${p}/attn/o_proj/MatMul`, heads * D, H, L.o);
    const postNorm = floats(`model.layers.${i}.post_attention_layernorm.weight`, [H], L.postNorm);
    let h2: string;
    [h2, residual] = skipNorm(residual, attnOut, postNorm, `${p}/post_attention_layernorm/SkipLayerNorm`);
    const gate = matmul(h2, `${p}/mlp/gate_proj/MatMul`, H, I, L.gate);
    const up = matmul(h2, `${p}/mlp/up_proj/MatMul`, H, I, L.up);
    const sig = g.node('Sigmoid', [gate], {}, `${p}/mlp/act_fn/Sigmoid/output_0`);
    const act = g.node('Mul', [gate, sig], {}, `${p}/mlp/act_fn/Mul/output_0`);
    const prod = g.node('Mul', [act, up], {}, `${p}/mlp/Mul/output_0`);
    skip = matmul(prod, `${p}/mlp/down_proj/MatMul`, I, H, L.down);
  }
  const finalNorm = floats(`model.layers.${layers}.final_norm_layernorm.weight`, [H], w.finalNorm);
  const [hidden] = skipNorm(residual, skip, finalNorm, `/model/layers.${layers}/final_norm_layernorm/SkipLayerNorm`, true);
  const logits = lmHead(hidden);

  g.output('logits', logits, io, ['batch_size', 'sequence_length', V]);
  const presentShape = ['batch_size', KV, 'total_sequence_length', D] as const;
  for (let i = 0; i < layers; i++) g.output(`present.${i}.key`, `present.${i}.key`, io, presentShape);
  for (let i = 0; i < layers; i++) g.output(`present.${i}.value`, `present.${i}.value`, io, presentShape);
  return g;
}

/** The genai_config.json the builder writes beside the model (builder.py's make_genai_config). */
export function genaiConfig(w: LlamaWeights, o: { bos: number | null; eos: number[]; filename: string; type: string }): object {
  const c = w.config;
  return {
    model: {
      bos_token_id: o.bos ?? 1,
      context_length: c.maxPositions,
      decoder: {
        session_options: { log_id: 'onnxruntime-genai', provider_options: [] },
        filename: o.filename,
        head_size: c.headDim,
        hidden_size: c.hidden,
        inputs: { input_ids: 'input_ids', attention_mask: 'attention_mask', past_key_names: 'past_key_values.%d.key', past_value_names: 'past_key_values.%d.value' },
        outputs: { logits: 'logits', present_key_names: 'present.%d.key', present_value_names: 'present.%d.value' },
        num_attention_heads: c.heads,
        num_hidden_layers: c.layers,
        num_key_value_heads: c.kvHeads,
      },
      eos_token_id: o.eos.length === 1 ? o.eos[0] : o.eos,
      pad_token_id: o.eos[0],
      type: o.type,
      vocab_size: c.vocabSize,
    },
    search: {
      diversity_penalty: 0.0,
      do_sample: false,
      early_stopping: true,
      length_penalty: 1.0,
      max_length: c.maxPositions,
      min_length: 0,
      no_repeat_ngram_size: 0,
      num_beams: 1,
      num_return_sequences: 1,
      past_present_share_buffer: true,
      repetition_penalty: 1.0,
      temperature: 1.0,
      top_k: 50,
      top_p: 1.0,
    },
  };
}
