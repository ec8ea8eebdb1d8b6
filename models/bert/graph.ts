// A BERT-style encoder as an ONNX graph: input_ids, attention_mask, token_type_ids in;
// last_hidden_state [batch, seq, outputDim] out (the engine mean-pools and normalises).
// bertEncoderGraph is the encoder alone, which the cross-encoders (cross-encoder.ts) share.
import { GraphBuilder, TensorType } from '../../src/onnx/graph.js';
import type { BertEncoderWeights, BertWeights } from './weights.js';

export function buildBertGraph(w: BertWeights): Uint8Array {
  const g = new GraphBuilder('bert');
  const x = bertEncoderGraph(g, w);
  const out = linear(g, x, w.proj, w.projB, w.config.hidden, w.config.outputDim, 'projection');
  g.output('last_hidden_state', out, TensorType.FLOAT, ['batch_size', 'sequence_length', w.config.outputDim]);
  return g.toBytes();
}

export interface EncoderGraphOptions {
  /**
   * RoBERTa's positions, as transformers' create_position_ids_from_input_ids makes them: counted
   * over the tokens that are not `paddingIdx`, starting at paddingIdx + 1 (padding itself sits at
   * paddingIdx). Absent: BERT's 0, 1, 2, …
   */
  robertaPaddingIdx?: number;
  /** Whether the graph takes token_type_ids (BERT); without it (RoBERTa) every token gets type 0's embedding. */
  tokenTypes?: boolean;
}

export const linear = (g: GraphBuilder, x: string, wt: Float32Array, b: Float32Array, inDim: number, outDim: number, name: string) =>
  g.node('Add', [g.node('MatMul', [x, g.weight(`${name}.weight`, [inDim, outDim], wt)], {}, `${name}.mm`), g.weight(`${name}.bias`, [outDim], b)], {}, `${name}.out`);

/** The encoder's inputs and layers; returns the name of its last hidden state [batch, seq, hidden]. */
export function bertEncoderGraph(g: GraphBuilder, w: BertEncoderWeights, opts: EncoderGraphOptions = {}): string {
  const c = w.config;
  const { hidden: h, heads, intermediate: I } = c;
  const D = h / heads;
  const withTypes = opts.tokenTypes ?? true;
  const ids = g.input('input_ids', TensorType.INT64, ['batch_size', 'sequence_length']);
  const mask = g.input('attention_mask', TensorType.INT64, ['batch_size', 'sequence_length']);
  const types = withTypes ? g.input('token_type_ids', TensorType.INT64, ['batch_size', 'sequence_length']) : undefined;

  const ln = (x: string, wt: Float32Array, b: Float32Array, name: string) =>
    g.node('LayerNormalization', [x, g.weight(`${name}.weight`, [h], wt), g.weight(`${name}.bias`, [h], b)], { axis: -1, epsilon: { float: c.eps } }, `${name}.out`);
  const dense = (x: string, wt: Float32Array, b: Float32Array, inDim: number, outDim: number, name: string) => linear(g, x, wt, b, inDim, outDim, name);

  let positions: string;
  if (opts.robertaPaddingIdx === undefined) {
    const seqLen = g.node('Squeeze', [g.node('Shape', [ids], { start: 1, end: 2 }, 'seq_len'), g.ints('axes0', [0])], {}, 'seq_len_s');
    positions = g.node('Range', [g.ints('zero', [0], []), seqLen, g.ints('one', [1], [])], {}, 'position_ids');
  } else {
    // cumsum(ids != pad) * (ids != pad) + pad: the padding's own positions all read padding_idx.
    const pad = opts.robertaPaddingIdx;
    const real = g.node('Cast', [g.node('Not', [g.node('Equal', [ids, g.ints('padding_idx', [pad], [])], {}, 'is_pad')], {}, 'not_pad')], { to: TensorType.INT64 }, 'real');
    const counted = g.node('Mul', [g.node('CumSum', [real, g.ints('axis1', [1], [])], {}, 'real_cumsum'), real], {}, 'incremental');
    positions = g.node('Add', [counted, g.ints('padding_idx_plus', [pad], [])], {}, 'position_ids');
  }
  const wordE = g.node('Gather', [g.weight('embeddings.word_embeddings.weight', [c.vocabSize, h], w.word), ids], { axis: 0 }, 'word_emb');
  const posE = g.node('Gather', [g.weight('embeddings.position_embeddings.weight', [c.maxPositions, h], w.position), positions], { axis: 0 }, 'pos_emb');
  const typeE = types
    ? g.node('Gather', [g.weight('embeddings.token_type_embeddings.weight', [c.typeVocab, h], w.tokenType), types], { axis: 0 }, 'type_emb')
    : g.weight('embeddings.token_type_embeddings.row0', [h], w.tokenType.subarray(0, h));
  let x = ln(g.node('Add', [g.node('Add', [wordE, posE], {}, 'emb_wp'), typeE], {}, 'emb_sum'), w.embLnW, w.embLnB, 'embeddings.LayerNorm');

  // Additive mask [B,1,1,S]: 0 for tokens, -1e9 for padding.
  const padded = g.node('Equal', [mask, g.ints('zero_i', [0], [])], {}, 'pad');
  const bias = g.node('Unsqueeze', [g.node('Where', [padded, g.scalar('mask_value', -1e9), g.scalar('zero_f', 0)], {}, 'mask_bias'), g.ints('axes12', [1, 2])], {}, 'mask_bias4');
  const headShape = g.ints('shape_heads', [0, 0, heads, D]);
  const backShape = g.ints('shape_back', [0, 0, h]);

  w.layers.forEach((L, i) => {
    const p = `encoder.layer.${i}`;
    const split = (t: string, n: string) => g.node('Transpose', [g.node('Reshape', [t, headShape], {}, `${n}_r`)], { perm: [0, 2, 1, 3] }, `${n}_t`);
    const q = split(dense(x, L.q, L.qb, h, h, `${p}.attention.self.query`), `${p}.q`);
    const k = split(dense(x, L.k, L.kb, h, h, `${p}.attention.self.key`), `${p}.k`);
    const v = split(dense(x, L.v, L.vb, h, h, `${p}.attention.self.value`), `${p}.v`);
    const kT = g.node('Transpose', [k], { perm: [0, 1, 3, 2] }, `${p}.kT`);
    const scores = g.node('Add', [g.node('Mul', [g.node('MatMul', [q, kT], {}, `${p}.qk`), g.scalar(`${p}.scale`, 1 / Math.sqrt(D))], {}, `${p}.qk_s`), bias], {}, `${p}.scores`);
    const probs = g.node('Softmax', [scores], { axis: -1 }, `${p}.probs`);
    const ctx = g.node('Reshape', [g.node('Transpose', [g.node('MatMul', [probs, v], {}, `${p}.ctx4`)], { perm: [0, 2, 1, 3] }, `${p}.ctx_t`), backShape], {}, `${p}.ctx`);
    const attn = dense(ctx, L.o, L.ob, h, h, `${p}.attention.output.dense`);
    x = ln(g.node('Add', [x, attn], {}, `${p}.attn_res`), L.ln1w, L.ln1b, `${p}.attention.output.LayerNorm`);
    const ff = dense(x, L.ff1, L.ff1b, h, I, `${p}.intermediate.dense`);
    // GELU (erf form): 0.5·x·(1 + erf(x/√2)).
    const erf = g.node('Erf', [g.node('Mul', [ff, g.scalar(`${p}.inv_sqrt2`, Math.SQRT1_2)], {}, `${p}.ff_scaled`)], {}, `${p}.erf`);
    const gelu = g.node('Mul', [g.node('Mul', [ff, g.scalar(`${p}.half`, 0.5)], {}, `${p}.half_x`), g.node('Add', [erf, g.scalar(`${p}.one_f`, 1)], {}, `${p}.erf_1`)], {}, `${p}.gelu`);
    const ff2 = dense(gelu, L.ff2, L.ff2b, I, h, `${p}.output.dense`);
    x = ln(g.node('Add', [x, ff2], {}, `${p}.ff_res`), L.ln2w, L.ln2b, `${p}.output.LayerNorm`);
  });
  return x;
}
