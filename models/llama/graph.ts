// The Llama decoder as an ONNX graph, with the I/O names transformers.js and the
// engine expect: input_ids, attention_mask, position_ids, past_key_values.{i}.key|value
// in; logits, present.{i}.key|value out.
import { GraphBuilder, TensorType } from '../../src/onnx/graph.js';
import { linear, storeMatrix, type Q4Options, type WeightFormat } from './quantize.js';
import { inverseFrequencies, type LlamaWeights } from './weights.js';

/**
 * How an export differs from the plain fp32 graph, as real exports do: weight format
 * (fp16, MatMulNBits q4 / q4f16, MatMulInteger q8), float16 KV and logits, no
 * position_ids (computed from the mask inside), num_logits_to_keep, Gemma's
 * embedding scale, tied embeddings. The defaults give the fp32 graph of tiny-chat.
 */
export interface GraphVariant {
  weights?: WeightFormat;
  /** MatMulNBits' block size (default Q4_BLOCK) and accuracy_level (default: none, fp32 compute) in q4 and q4f16. */
  q4?: Q4Options;
  /** Element type of past_key_values, present and logits. */
  io?: 'float32' | 'float16';
  positionIds?: boolean;
  numLogitsToKeep?: boolean;
  /** Gemma multiplies the embeddings by sqrt(hidden_size) inside the graph. */
  embedScale?: number;
  /** lm_head is the embedding matrix transposed (one initializer, as tied checkpoints). */
  tiedEmbeddings?: boolean;
  /**
   * Feature-extraction exports of decoder embedders (Qwen3-Embedding, gte-Qwen2) stop at the
   * final norm: `last_hidden_state` instead of `logits`, the KV inputs and outputs kept.
   */
  hiddenStates?: boolean;
  /** Gemma 2's soft caps, cap·tanh(x / cap): on attention scores and on the final logits. */
  softcap?: { attention: number; final: number };
  /** Granite's multipliers: attention scores scaled by `attention` (not 1/√head_dim), each residual branch by `residual`, logits divided by `logits`. */
  multipliers?: { attention: number; residual: number; logits: number };
  /** SmolLM3's NoPE layers: these layers apply no rotary embedding. */
  noRopeLayers?: number[];
  /**
   * Qwen2-VL's multimodal rotary embedding (rope_scaling.mrope_section): position_ids is
   * [3, batch, seq] (temporal, height, width streams), and frequency j takes its angle from the
   * stream whose section holds j (the sections, in order, sum to head_dim / 2).
   */
  mropeSection?: readonly [number, number, number];
}

/** cap·tanh(x / cap). */
function softcap(g: GraphBuilder, x: string, cap: number, name: string): string {
  const t = g.node('Tanh', [g.node('Div', [x, g.scalar(`${name}.cap_div`, cap)], {}, `${name}.scaled`)], {}, `${name}.tanh`);
  return g.node('Mul', [t, g.scalar(`${name}.cap_mul`, cap)], {}, `${name}.capped`);
}

/** Additive mask value: large and finite, so rows of left padding stay finite. */
export const MASK_VALUE = -1e9;

function rmsNorm(g: GraphBuilder, x: string, weight: string, eps: number, name: string): string {
  const sq = g.node('Mul', [x, x], {}, `${name}.sq`);
  const mean = g.node('ReduceMean', [sq], { axes: [-1], keepdims: 1 }, `${name}.mean`);
  const std = g.node('Sqrt', [g.node('Add', [mean, g.scalar(`${name}.eps`, eps)], {}, `${name}.var`)], {}, `${name}.std`);
  return g.node('Mul', [g.node('Div', [x, std], {}, `${name}.normed`), weight], {}, `${name}.out`);
}

/** Rotary embedding, rotate-half convention: x·cos + rotate_half(x)·sin. */
function rope(g: GraphBuilder, x: string, cos: string, sin: string, half: number, name: string): string {
  const axis = g.ints(`${name}.axis`, [-1]);
  const lo = g.node('Slice', [x, g.ints(`${name}.lo_start`, [0]), g.ints(`${name}.lo_end`, [half]), axis], {}, `${name}.x1`);
  const hi = g.node('Slice', [x, g.ints(`${name}.hi_start`, [half]), g.ints(`${name}.hi_end`, [2 * half]), axis], {}, `${name}.x2`);
  const rotated = g.node('Concat', [g.node('Neg', [hi], {}, `${name}.neg_x2`), lo], { axis: -1 }, `${name}.rotated`);
  return g.node('Add', [g.node('Mul', [x, cos], {}, `${name}.xcos`), g.node('Mul', [rotated, sin], {}, `${name}.xsin`)], {}, `${name}.out`);
}

export function buildLlamaGraph(w: LlamaWeights, variant: GraphVariant = {}): Uint8Array {
  return llamaGraph(w, variant).toBytes();
}

export function llamaGraph(w: LlamaWeights, variant: GraphVariant = {}): GraphBuilder {
  const c = w.config;
  const { hidden: H, heads, kvHeads: KV, headDim: D, intermediate: I, vocabSize: V } = c;
  const rep = heads / KV;
  const format = variant.weights ?? 'fp32';
  const ioType = variant.io === 'float16' ? TensorType.FLOAT16 : TensorType.FLOAT;
  const g = new GraphBuilder('llama');
  /** A float16 value as float32 for the computation (the graph computes in float32 throughout). */
  const widen = (v: string) => (ioType === TensorType.FLOAT ? v : g.node('Cast', [v], { to: TensorType.FLOAT }, `${v}_f32`));

  const inputIds = g.input('input_ids', TensorType.INT64, ['batch_size', 'sequence_length']);
  const attentionMask = g.input('attention_mask', TensorType.INT64, ['batch_size', 'total_sequence_length']);
  if (variant.mropeSection && variant.positionIds === false) throw new Error('M-RoPE needs its position_ids input');
  const positionIds =
    variant.positionIds === false
      ? positionsFromMask(g, inputIds, attentionMask)
      : g.input('position_ids', TensorType.INT64, variant.mropeSection ? [3, 'batch_size', 'sequence_length'] : ['batch_size', 'sequence_length']);
  const keep = variant.numLogitsToKeep ? g.input('num_logits_to_keep', TensorType.INT64, []) : undefined;
  const pastShape = ['batch_size', KV, 'past_sequence_length', D] as const;
  const past: { key: string; value: string }[] = [];
  for (let i = 0; i < c.layers; i++) {
    past.push({
      key: widen(g.input(`past_key_values.${i}.key`, ioType, pastShape)),
      value: widen(g.input(`past_key_values.${i}.value`, ioType, pastShape)),
    });
  }

  // Token embedding.
  const embedding = storeMatrix(g, 'model.embed_tokens.weight', [V, H], w.embed, format);
  let x = widenMatrix(g, g.node('Gather', [embedding, inputIds], { axis: 0 }, 'embeddings'), format);
  if (variant.embedScale !== undefined) x = g.node('Mul', [x, g.scalar('embed_scale', variant.embedScale)], {}, 'embeddings_scaled');

  // Rotary tables from position_ids: [B, S, D].
  const freqs = variant.mropeSection ? mropeFrequencies(g, positionIds, inverseFrequencies(c), variant.mropeSection) : ropeFrequencies(g, positionIds, inverseFrequencies(c));
  const emb = g.node('Concat', [freqs, freqs], { axis: -1 }, 'rope.emb');
  const cos = g.node('Cos', [emb], {}, 'rope.cos');
  const sin = g.node('Sin', [emb], {}, 'rope.sin');
  const cosK = g.node('Unsqueeze', [cos, g.ints('axes_1', [1])], {}, 'rope.cos_k'); // [B,1,S,D]
  const sinK = g.node('Unsqueeze', [sin, g.ints('axes_1b', [1])], {}, 'rope.sin_k');
  const cosQ = g.node('Unsqueeze', [cos, g.ints('axes_12', [1, 2])], {}, 'rope.cos_q'); // [B,1,1,S,D]
  const sinQ = g.node('Unsqueeze', [sin, g.ints('axes_12b', [1, 2])], {}, 'rope.sin_q');

  // Attention bias [B,1,1,S,T]: causal (by absolute index) and padding, additive MASK_VALUE.
  const seqLen = g.node('Shape', [inputIds], { start: 1, end: 2 }, 'mask.S');
  const totalLen = g.node('Shape', [attentionMask], { start: 1, end: 2 }, 'mask.T');
  const pastLen = g.node('Sub', [totalLen, seqLen], {}, 'mask.P');
  const scalar = (v: string, n: string) => g.node('Squeeze', [v, g.ints(`${n}.axes`, [0])], {}, n);
  const one = g.ints('mask.one', [1], []);
  const keyIdx = g.node('Range', [g.ints('mask.zero', [0], []), scalar(totalLen, 'mask.T_s'), one], {}, 'mask.key_idx');
  const queryIdx = g.node('Range', [scalar(pastLen, 'mask.P_s'), scalar(totalLen, 'mask.T_s2'), one], {}, 'mask.query_idx');
  const future = g.node(
    'Greater',
    [g.node('Unsqueeze', [keyIdx, g.ints('axes_0', [0])], {}, 'mask.key_row'), g.node('Unsqueeze', [queryIdx, g.ints('axes_1c', [1])], {}, 'mask.query_col')],
    {},
    'mask.future',
  ); // [S,T]
  const padded = g.node('Unsqueeze', [g.node('Equal', [attentionMask, g.ints('mask.zero_i', [0], [])], {}, 'mask.pad'), g.ints('axes_12c', [1, 2])], {}, 'mask.pad_u'); // [B,1,1,T]
  const masked = g.node('Or', [future, padded], {}, 'mask.masked'); // [B,1,S,T]
  const bias = g.node('Where', [masked, g.scalar('mask.value', MASK_VALUE), g.scalar('mask.zero_f', 0)], {}, 'mask.bias');
  const bias5 = g.node('Unsqueeze', [bias, g.ints('axes_1d', [1])], {}, 'mask.bias5'); // [B,1,1,S,T]

  const qShape = g.ints('shape.q', [0, 0, KV, rep, D]);
  const kvShape = g.ints('shape.kv', [0, 0, KV, D]);
  const outShape = g.ints('shape.attn_out', [0, 0, heads * D]);
  const scale = g.scalar('attn.scale', variant.multipliers?.attention ?? 1 / Math.sqrt(D));
  const residual = (branch: string, name: string) =>
    variant.multipliers ? g.node('Mul', [branch, g.scalar(`${name}.residual_multiplier`, variant.multipliers.residual)], {}, `${name}.scaled`) : branch;

  for (let i = 0; i < c.layers; i++) {
    const L = w.layers[i]!;
    const p = `model.layers.${i}`;
    const h = rmsNorm(g, x, g.weight(`${p}.input_layernorm.weight`, [H], L.inputNorm), c.rmsEps, `${p}.input_layernorm`);
    const q = g.node('Transpose', [g.node('Reshape', [linear(g, h, `${p}.self_attn.q_proj.weight`, [H, heads * D], L.q, format, `${p}.q`, variant.q4), qShape], {}, `${p}.q_r`)], { perm: [0, 2, 3, 1, 4] }, `${p}.q_t`);
    const k = g.node('Transpose', [g.node('Reshape', [linear(g, h, `${p}.self_attn.k_proj.weight`, [H, KV * D], L.k, format, `${p}.k`, variant.q4), kvShape], {}, `${p}.k_r`)], { perm: [0, 2, 1, 3] }, `${p}.k_t`);
    const v = g.node('Transpose', [g.node('Reshape', [linear(g, h, `${p}.self_attn.v_proj.weight`, [H, KV * D], L.v, format, `${p}.v`, variant.q4), kvShape], {}, `${p}.v_r`)], { perm: [0, 2, 1, 3] }, `${p}.v_t`);
    const noRope = variant.noRopeLayers?.includes(i);
    const qr = noRope ? q : rope(g, q, cosQ, sinQ, D / 2, `${p}.q_rope`);
    const kr = noRope ? k : rope(g, k, cosK, sinK, D / 2, `${p}.k_rope`);
    // A float16 present is the Cast of the float32 Concat, which then needs a name of its own.
    const concatName = (kind: string) => (ioType === TensorType.FLOAT ? `present.${i}.${kind}` : `${p}.present_${kind}_f32`);
    const presentK = g.node('Concat', [past[i]!.key, kr], { axis: 2 }, concatName('key'));
    const presentV = g.node('Concat', [past[i]!.value, v], { axis: 2 }, concatName('value'));
    const kT = g.node('Unsqueeze', [g.node('Transpose', [presentK], { perm: [0, 1, 3, 2] }, `${p}.k_T`), g.ints(`${p}.axes_2`, [2])], {}, `${p}.k_T5`);
    let scaled = g.node('Mul', [g.node('MatMul', [qr, kT], {}, `${p}.scores_raw`), scale], {}, `${p}.scores_scaled`);
    if (variant.softcap) scaled = softcap(g, scaled, variant.softcap.attention, `${p}.attn_softcap`);
    const scores = g.node('Add', [scaled, bias5], {}, `${p}.scores`);
    const probs = g.node('Softmax', [scores], { axis: -1 }, `${p}.probs`);
    const v5 = g.node('Unsqueeze', [presentV, g.ints(`${p}.axes_2v`, [2])], {}, `${p}.v5`);
    const ctx = g.node('Reshape', [g.node('Transpose', [g.node('MatMul', [probs, v5], {}, `${p}.ctx5`)], { perm: [0, 3, 1, 2, 4] }, `${p}.ctx_t`), outShape], {}, `${p}.ctx`);
    x = g.node('Add', [x, residual(linear(g, ctx, `${p}.self_attn.o_proj.weight`, [heads * D, H], L.o, format, `${p}.attn_out`, variant.q4), `${p}.attn_out`)], {}, `${p}.resid_attn`);
    const h2 = rmsNorm(g, x, g.weight(`${p}.post_attention_layernorm.weight`, [H], L.postNorm), c.rmsEps, `${p}.post_attention_layernorm`);
    const gate = linear(g, h2, `${p}.mlp.gate_proj.weight`, [H, I], L.gate, format, `${p}.gate`, variant.q4);
    const up = linear(g, h2, `${p}.mlp.up_proj.weight`, [H, I], L.up, format, `${p}.up`, variant.q4);
    const act = g.node('Mul', [g.node('Mul', [gate, g.node('Sigmoid', [gate], {}, `${p}.gate_sig`)], {}, `${p}.silu`), up], {}, `${p}.act`);
    x = g.node('Add', [x, residual(linear(g, act, `${p}.mlp.down_proj.weight`, [I, H], L.down, format, `${p}.mlp_out`, variant.q4), `${p}.mlp_out`)], {}, `${p}.resid_mlp`);
    const presentShape = ['batch_size', KV, 'total_sequence_length', D] as const;
    g.output(`present.${i}.key`, narrow(g, presentK, ioType), ioType, presentShape);
    g.output(`present.${i}.value`, narrow(g, presentV, ioType), ioType, presentShape);
  }
  let hf = rmsNorm(g, x, g.weight('model.norm.weight', [H], w.finalNorm), c.rmsEps, 'model.norm');
  if (keep) {
    // The last num_logits_to_keep positions (0 keeps them all, as -0 is 0).
    const start = g.node('Unsqueeze', [g.node('Neg', [keep], {}, 'keep.neg'), g.ints('keep.axes', [0])], {}, 'keep.start');
    hf = g.node('Slice', [hf, start, g.ints('keep.end', [Number.MAX_SAFE_INTEGER]), g.ints('keep.axis', [1])], {}, 'keep.hidden');
  }
  if (variant.hiddenStates) {
    g.output('last_hidden_state', narrow(g, hf, ioType), ioType, ['batch_size', 'sequence_length', H]);
    return g;
  }
  const logitsName = ioType === TensorType.FLOAT && !variant.softcap && !variant.multipliers ? 'logits' : 'logits_f32';
  let logits = variant.tiedEmbeddings
    ? g.node('MatMul', [hf, g.node('Transpose', [widenMatrix(g, embedding, format)], { perm: [1, 0] }, 'lm_head.tied')], {}, logitsName)
    : linear(g, hf, 'lm_head.weight', [H, V], w.lmHead, format, logitsName, variant.q4);
  if (variant.softcap) logits = softcap(g, logits, variant.softcap.final, 'final_logit_softcap');
  if (variant.multipliers) logits = g.node('Div', [logits, g.scalar('logits_scaling', variant.multipliers.logits)], {}, 'logits_scaled');
  g.output('logits', narrow(g, logits, ioType), ioType, ['batch_size', 'sequence_length', V]);
  return g;
}

/** position_ids [B, S] → angles [B, S, D/2]: position · inv_freq. */
function ropeFrequencies(g: GraphBuilder, positionIds: string, invFreq: Float32Array): string {
  const posF = g.node('Unsqueeze', [g.node('Cast', [positionIds], { to: TensorType.FLOAT }, 'positions_f'), g.ints('axes_2', [2])], {}, 'positions_u');
  return g.node('Mul', [posF, g.weight('rope.inv_freq', [invFreq.length], invFreq)], {}, 'rope.freqs');
}

/**
 * M-RoPE: position_ids [3, B, S] → angles [B, S, D/2], frequency j from stream k where j falls
 * in section k (Qwen2-VL's apply_multimodal_rotary_pos_emb, whose cos/sin chunks of
 * mrope_section · 2 are these angles, doubled by the same concat as plain RoPE). Each stream's
 * angles times a one-hot [3, 1, 1, D/2] mask, summed over the streams (x + 0 + 0: exact).
 */
function mropeFrequencies(g: GraphBuilder, positionIds: string, invFreq: Float32Array, section: readonly [number, number, number]): string {
  const half = invFreq.length;
  if (section.some((n) => !Number.isInteger(n) || n < 0) || section[0] + section[1] + section[2] !== half) {
    throw new Error(`mrope_section ${JSON.stringify(section)} must sum to head_dim / 2 = ${half}`);
  }
  const mask = new Float32Array(3 * half);
  let j = 0;
  section.forEach((n, k) => {
    for (let i = 0; i < n; i++, j++) mask[k * half + j] = 1;
  });
  const posF = g.node('Unsqueeze', [g.node('Cast', [positionIds], { to: TensorType.FLOAT }, 'positions_f'), g.ints('axes_3', [3])], {}, 'positions_u'); // [3,B,S,1]
  const all = g.node('Mul', [posF, g.weight('rope.inv_freq', [half], invFreq)], {}, 'rope.stream_freqs'); // [3,B,S,D/2]
  const picked = g.node('Mul', [all, g.weight('rope.mrope_mask', [3, 1, 1, half], mask)], {}, 'rope.stream_picked');
  return g.node('ReduceSum', [picked, g.ints('rope.stream_axis', [0])], { keepdims: 0 }, 'rope.freqs'); // [B,S,D/2]
}

/** A float32 value cast to the graph's I/O type (float16 exports). */
function narrow(g: GraphBuilder, v: string, type: number): string {
  return type === TensorType.FLOAT ? v : g.node('Cast', [v], { to: type }, `${v}_f16`);
}

/** An embedding (matrix or gathered rows) as float32: fp16 and q4f16 exports store it as float16. */
function widenMatrix(g: GraphBuilder, m: string, format: WeightFormat): string {
  return format === 'fp16' || format === 'q4f16' ? g.node('Cast', [m], { to: TensorType.FLOAT }, `${m}_f32`) : m;
}

/** Exports without a position_ids input count positions from the attention mask (cumsum − 1, last S columns). */
function positionsFromMask(g: GraphBuilder, inputIds: string, mask: string): string {
  const counted = g.node('Sub', [g.node('CumSum', [mask, g.ints('pos.axis', [1], [])], {}, 'pos.cumsum'), g.ints('pos.one', [1], [])], {}, 'pos.all');
  const s = g.node('Shape', [inputIds], { start: 1, end: 2 }, 'pos.S');
  return g.node('Slice', [counted, g.node('Neg', [s], {}, 'pos.start'), g.ints('pos.end', [Number.MAX_SAFE_INTEGER]), g.ints('pos.slice_axis', [1])], {}, 'position_ids_computed');
}
