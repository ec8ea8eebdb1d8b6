// Whisper's two ONNX files in the interface of Optimum's exports with cross-attention outputs
// (onnx-community/whisper-*_timestamped, transformers.js's layout):
//   encoder_model.onnx         input_features [batch_size, feature_size, encoder_sequence_length]
//                              → last_hidden_state [batch_size, encoder_sequence_length / 2, d_model]
//   decoder_model_merged.onnx  input_ids, encoder_hidden_states, past_key_values.{i}.decoder|encoder.key|value,
//                              use_cache_branch → logits, present.{i}.decoder|encoder.key|value, cross_attentions.{i}
// The merged decoder is Optimum's: one If on use_cache_branch, whose else branch is the decoder
// without past (encoder K/V computed from encoder_hidden_states) and whose then branch is the
// decoder with past (self K/V appended to the past, encoder K/V read from the past, and the
// present encoder K/V empty constants [0, heads, 1, head_dim], which transformers.js replaces by
// the past it fed). Both branches read the weights from the outer graph.
import { GraphBuilder, TensorType } from '../../src/onnx/graph.js';
import type { GraphData, NodeData } from '../../src/onnx/proto.js';
import type { Attention, Mlp, Norm, WhisperWeights } from './weights.js';

const EPS = 1e-5;
const MASK = -1e9;

function layerNorm(g: GraphBuilder, x: string, w: Norm, name: string): string {
  const D = w.weight.length;
  return g.node('LayerNormalization', [x, g.weight(`${name}.weight`, [D], w.weight), g.weight(`${name}.bias`, [D], w.bias)], { axis: -1, epsilon: { float: EPS } }, `${name}.out`);
}

/** The exact GELU (Whisper's "gelu"): 0.5·x·(1 + erf(x/√2)); ONNX's Gelu op needs opset 20. */
function gelu(g: GraphBuilder, x: string, name: string): string {
  const erf = g.node('Erf', [g.node('Mul', [x, g.scalar(`${name}.rsqrt2`, Math.SQRT1_2)], {}, `${name}.scaled`)], {}, `${name}.erf`);
  const half = g.node('Mul', [x, g.scalar(`${name}.half`, 0.5)], {}, `${name}.halfx`);
  return g.node('Mul', [half, g.node('Add', [erf, g.scalar(`${name}.one`, 1)], {}, `${name}.onept`)], {}, `${name}.out`);
}

/** Where a graph's weights are stored: the graph itself, or the enclosing graph of a branch. */
type WeightStore = Pick<GraphBuilder, 'weight'>;

/** `g`'s initializers, each name stored once however many branches ask for it. */
function sharedWeights(g: GraphBuilder): WeightStore {
  const stored = new Map<string, string>();
  return {
    weight(name, dims, data) {
      if (!stored.has(name)) stored.set(name, g.weight(name, dims, data));
      return stored.get(name)!;
    },
  };
}

/** x · W (+ b), W [K, N] stored in `weights`. */
function dense(g: GraphBuilder, weights: WeightStore, x: string, name: string, K: number, N: number, w: Float32Array, b?: Float32Array): string {
  const y = g.node('MatMul', [x, weights.weight(`${name}.weight`, [K, N], w)], {}, `${name}.mm`);
  return b ? g.node('Add', [y, weights.weight(`${name}.bias`, [N], b)], {}, `${name}.out`) : y;
}

/** [B, S, H·hd] → [B, H, S, hd]. */
function splitHeads(g: GraphBuilder, x: string, H: number, hd: number, name: string): string {
  return g.node('Transpose', [g.node('Reshape', [x, g.ints(`${name}.shape`, [0, 0, H, hd])], {}, `${name}.r`)], { perm: [0, 2, 1, 3] }, `${name}.t`);
}

/** softmax(q·kᵀ/√hd + bias)·v merged back to [B, S, D]; returns the context and the probabilities. */
function attend(g: GraphBuilder, q: string, k: string, v: string, hd: number, D: number, bias: string | undefined, name: string): { ctx: string; probs: string } {
  const kT = g.node('Transpose', [k], { perm: [0, 1, 3, 2] }, `${name}.kT`);
  let scores = g.node('Mul', [g.node('MatMul', [q, kT], {}, `${name}.qk`), g.scalar(`${name}.scale`, 1 / Math.sqrt(hd))], {}, `${name}.scores`);
  if (bias) scores = g.node('Add', [scores, bias], {}, `${name}.masked`);
  const probs = g.node('Softmax', [scores], { axis: -1 }, `${name}.probs`);
  const ctx = g.node('MatMul', [probs, v], {}, `${name}.ctx_heads`);
  const merged = g.node('Reshape', [g.node('Transpose', [ctx], { perm: [0, 2, 1, 3] }, `${name}.ctx_t`), g.ints(`${name}.merge`, [0, 0, D])], {}, `${name}.ctx`);
  return { ctx: merged, probs };
}

function mlp(g: GraphBuilder, weights: WeightStore, x: string, m: Mlp, D: number, F: number, name: string): string {
  const h = gelu(g, dense(g, weights, x, `${name}.fc1`, D, F, m.fc1, m.fc1Bias), `${name}.act`);
  return dense(g, weights, h, `${name}.fc2`, F, D, m.fc2, m.fc2Bias);
}

export function encoderGraph(w: WhisperWeights): GraphBuilder {
  const { dModel: D, melBins: M, encoderHeads: H, encoderFfn: F, sourcePositions: P } = w.dims;
  const hd = D / H;
  const g = new GraphBuilder('whisper_encoder');
  const features = g.input('input_features', TensorType.FLOAT, ['batch_size', 'feature_size', 'encoder_sequence_length']);
  const c1 = g.node('Conv', [features, g.weight('model.encoder.conv1.weight', [D, M, 3], w.conv1), g.weight('model.encoder.conv1.bias', [D], w.conv1Bias)], { kernel_shape: [3], pads: [1, 1], strides: [1] }, 'conv1');
  const c2 = g.node('Conv', [gelu(g, c1, 'conv1.gelu'), g.weight('model.encoder.conv2.weight', [D, D, 3], w.conv2), g.weight('model.encoder.conv2.bias', [D], w.conv2Bias)], { kernel_shape: [3], pads: [1, 1], strides: [2] }, 'conv2');
  const frames = g.node('Transpose', [gelu(g, c2, 'conv2.gelu')], { perm: [0, 2, 1] }, 'frames');
  let x = g.node('Add', [frames, g.weight('model.encoder.embed_positions.weight', [P, D], w.encoderPositions)], {}, 'embedded');
  w.encoderLayers.forEach((L, i) => {
    const p = `model.encoder.layers.${i}`;
    const h = layerNorm(g, x, L.selfNorm, `${p}.self_attn_layer_norm`);
    const a = L.self;
    const q = splitHeads(g, dense(g, g, h, `${p}.self_attn.q_proj`, D, D, a.q, a.qBias), H, hd, `${p}.q`);
    const k = splitHeads(g, dense(g, g, h, `${p}.self_attn.k_proj`, D, D, a.k), H, hd, `${p}.k`);
    const v = splitHeads(g, dense(g, g, h, `${p}.self_attn.v_proj`, D, D, a.v, a.vBias), H, hd, `${p}.v`);
    const { ctx } = attend(g, q, k, v, hd, D, undefined, `${p}.self_attn`);
    x = g.node('Add', [x, dense(g, g, ctx, `${p}.self_attn.out_proj`, D, D, a.out, a.outBias)], {}, `${p}.resid_attn`);
    x = g.node('Add', [x, mlp(g, g, layerNorm(g, x, L.mlpNorm, `${p}.final_layer_norm`), L.mlp, D, F, p)], {}, `${p}.resid_mlp`);
  });
  g.output('last_hidden_state', layerNorm(g, x, w.encoderNorm, 'model.encoder.layer_norm'), TensorType.FLOAT, ['batch_size', 'encoder_sequence_length / 2', D]);
  return g;
}

/** The merged decoder's output names in Optimum's order. */
export function decoderOutputNames(layers: number): string[] {
  const present = Array.from({ length: layers }, (_, i) => ['decoder.key', 'decoder.value', 'encoder.key', 'encoder.value'].map((s) => `present.${i}.${s}`)).flat();
  return ['logits', ...present, ...Array.from({ length: layers }, (_, i) => `cross_attentions.${i}`)];
}

/** The merged decoder's input names in Optimum's order. */
export function decoderInputNames(layers: number): string[] {
  const past = Array.from({ length: layers }, (_, i) => ['decoder.key', 'decoder.value', 'encoder.key', 'encoder.value'].map((s) => `past_key_values.${i}.${s}`)).flat();
  return ['input_ids', 'encoder_hidden_states', ...past, 'use_cache_branch'];
}

/**
 * One branch of the merged decoder. Weights go to `outer` (both branches name them alike, so
 * they are stored once); everything else the branch defines is its own (scoped below).
 */
function decoderBranch(w: WhisperWeights, outer: WeightStore, withPast: boolean): GraphData {
  const { dModel: D, decoderHeads: H, decoderFfn: F, vocabSize: V, targetPositions: T } = w.dims;
  const hd = D / H;
  const g = new GraphBuilder(withPast ? 'with_past' : 'no_past');
  const scalarOf = (v: string, n: string) => g.node('Squeeze', [v, g.ints(`${n}.axes`, [0])], {}, n);

  // Positions past_len … past_len + seq − 1 (the past length from the first self-attention past).
  const seq = g.node('Shape', ['input_ids'], { start: 1, end: 2 }, 'seq_len');
  const past = withPast ? g.node('Shape', ['past_key_values.0.decoder.key'], { start: 2, end: 3 }, 'past_len') : g.ints('past_len', [0]);
  const total = g.node('Add', [past, seq], {}, 'total_len');
  const one = g.ints('one', [1], []);
  const positions = g.node('Range', [scalarOf(past, 'past_s'), scalarOf(total, 'total_s'), one], {}, 'positions');
  const embeds = g.node('Gather', [outer.weight('model.decoder.embed_tokens.weight', [V, D], w.embedTokens), 'input_ids'], { axis: 0 }, 'inputs_embeds');
  const posEmbeds = g.node('Gather', [outer.weight('model.decoder.embed_positions.weight', [T, D], w.decoderPositions), positions], { axis: 0 }, 'position_embeds');
  let x = g.node('Add', [embeds, posEmbeds], {}, 'hidden_0');

  // Causal bias [S, T]: key j is hidden from query i (at past + i) when j > past + i.
  const keyIdx = g.node('Range', [g.ints('zero', [0], []), scalarOf(total, 'total_s2'), one], {}, 'key_idx');
  const future = g.node('Greater', [g.node('Unsqueeze', [keyIdx, g.ints('axes0', [0])], {}, 'key_row'), g.node('Unsqueeze', [positions, g.ints('axes1', [1])], {}, 'query_col')], {}, 'future');
  const causal = g.node('Where', [future, g.scalar('mask_value', MASK), g.scalar('mask_zero', 0)], {}, 'causal_bias');

  const presentShape = ['batch_size', H, 'past_decoder_sequence_length + 1', hd];
  const encoderShape = ['batch_size', H, 'encoder_sequence_length_out', hd];
  const presents: [string, string, readonly (string | number)[]][] = [];
  const crosses: string[] = [];
  w.decoderLayers.forEach((L, i) => {
    const p = `model.decoder.layers.${i}`;
    const lin = (x: string, name: string, m: Float32Array, b?: Float32Array) => dense(g, outer, x, name, D, D, m, b);
    const norm = (x: string, n: Norm, name: string) =>
      g.node('LayerNormalization', [x, outer.weight(`${name}.weight`, [D], n.weight), outer.weight(`${name}.bias`, [D], n.bias)], { axis: -1, epsilon: { float: EPS } }, `${name}.out`);

    // Causal self-attention over the past and the new tokens.
    const h = norm(x, L.selfNorm, `${p}.self_attn_layer_norm`);
    const s: Attention = L.self;
    const q = splitHeads(g, lin(h, `${p}.self_attn.q_proj`, s.q, s.qBias), H, hd, `${p}.q`);
    let k = splitHeads(g, lin(h, `${p}.self_attn.k_proj`, s.k), H, hd, `${p}.k`);
    let v = splitHeads(g, lin(h, `${p}.self_attn.v_proj`, s.v, s.vBias), H, hd, `${p}.v`);
    if (withPast) {
      k = g.node('Concat', [`past_key_values.${i}.decoder.key`, k], { axis: 2 }, `${p}.present_key`);
      v = g.node('Concat', [`past_key_values.${i}.decoder.value`, v], { axis: 2 }, `${p}.present_value`);
    }
    presents.push([`present.${i}.decoder.key`, k, presentShape], [`present.${i}.decoder.value`, v, presentShape]);
    const self = attend(g, q, k, v, hd, D, causal, `${p}.self_attn`);
    x = g.node('Add', [x, lin(self.ctx, `${p}.self_attn.out_proj`, s.out, s.outBias)], {}, `${p}.resid_self`);

    // Cross-attention over the encoder states: K/V computed once (no past), then read from the past.
    const hc = norm(x, L.crossNorm, `${p}.encoder_attn_layer_norm`);
    const c: Attention = L.cross;
    const qc = splitHeads(g, lin(hc, `${p}.encoder_attn.q_proj`, c.q, c.qBias), H, hd, `${p}.cq`);
    let kc: string;
    let vc: string;
    if (withPast) {
      kc = `past_key_values.${i}.encoder.key`;
      vc = `past_key_values.${i}.encoder.value`;
      const empty = (name: string) => g.node('Constant', [], { value: { tensor: { name: 'const_tensor', dims: [0, H, 1, hd], type: TensorType.FLOAT, raw: new Uint8Array(0) } } }, name);
      presents.push([`present.${i}.encoder.key`, empty(`${p}.empty_key`), encoderShape], [`present.${i}.encoder.value`, empty(`${p}.empty_value`), encoderShape]);
    } else {
      kc = splitHeads(g, lin('encoder_hidden_states', `${p}.encoder_attn.k_proj`, c.k), H, hd, `${p}.ck`);
      vc = splitHeads(g, lin('encoder_hidden_states', `${p}.encoder_attn.v_proj`, c.v, c.vBias), H, hd, `${p}.cv`);
      presents.push([`present.${i}.encoder.key`, kc, encoderShape], [`present.${i}.encoder.value`, vc, encoderShape]);
    }
    const cross = attend(g, qc, kc, vc, hd, D, undefined, `${p}.encoder_attn`);
    crosses.push(cross.probs);
    x = g.node('Add', [x, lin(cross.ctx, `${p}.encoder_attn.out_proj`, c.out, c.outBias)], {}, `${p}.resid_cross`);

    x = g.node('Add', [x, mlp(g, outer, norm(x, L.mlpNorm, `${p}.final_layer_norm`), L.mlp, D, F, p)], {}, `${p}.resid_mlp`);
  });
  const last = g.node('LayerNormalization', [x, outer.weight('model.decoder.layer_norm.weight', [D], w.decoderNorm.weight), outer.weight('model.decoder.layer_norm.bias', [D], w.decoderNorm.bias)], { axis: -1, epsilon: { float: EPS } }, 'last_hidden');
  const logits = g.node('MatMul', [last, outer.weight('proj_out.weight', [D, V], w.projOut)], {}, 'logits_mm');

  g.output('logits', logits, TensorType.FLOAT, ['batch_size', 'decoder_sequence_length', V]);
  // Optimum's order: per layer decoder key, value, encoder key, value.
  for (let i = 0; i < w.decoderLayers.length; i++) {
    for (const [name, value, shape] of presents.slice(4 * i, 4 * i + 4)) g.output(name, value, TensorType.FLOAT, shape);
  }
  crosses.forEach((probs, i) => g.output(`cross_attentions.${i}`, probs, TensorType.FLOAT, ['batch_size', H, 'decoder_sequence_length', 'encoder_sequence_length_out']));
  return scoped(g.graph(), withPast ? 'with_past/' : 'no_past/');
}

/** `graph` with every value it defines (node outputs, its own initializers, its outputs) and its node names under `prefix`, so no name is shared with the enclosing graph or the other branch. */
function scoped(graph: GraphData, prefix: string): GraphData {
  const own = new Set<string>([...graph.nodes.flatMap((n) => n.outputs), ...graph.initializers.map((t) => t.name)]);
  const rename = (v: string) => (own.has(v) ? prefix + v : v);
  const nodes: NodeData[] = graph.nodes.map((n) => ({ ...n, name: prefix + n.name, inputs: n.inputs.map(rename), outputs: n.outputs.map(rename) }));
  return {
    ...graph,
    nodes,
    initializers: graph.initializers.map((t) => ({ ...t, name: rename(t.name) })),
    outputs: graph.outputs.map((o) => ({ ...o, name: rename(o.name) })),
  };
}

export function decoderMergedGraph(w: WhisperWeights): GraphBuilder {
  const { dModel: D, decoderHeads: H, decoderLayers: layers, vocabSize: V } = w.dims;
  const hd = D / H;
  const g = new GraphBuilder('merged');
  g.input('input_ids', TensorType.INT64, ['batch_size', 'decoder_sequence_length']);
  g.input('encoder_hidden_states', TensorType.FLOAT, ['batch_size', 'encoder_sequence_length / 2', D]);
  for (let i = 0; i < layers; i++) {
    for (const kind of ['key', 'value']) g.input(`past_key_values.${i}.decoder.${kind}`, TensorType.FLOAT, ['batch_size', H, 'past_decoder_sequence_length', hd]);
    for (const kind of ['key', 'value']) g.input(`past_key_values.${i}.encoder.${kind}`, TensorType.FLOAT, ['batch_size', H, 'encoder_sequence_length_out', hd]);
  }
  const useCache = g.input('use_cache_branch', TensorType.BOOL, [1]);
  const weights = sharedWeights(g);
  const withPast = decoderBranch(w, weights, true);
  const noPast = decoderBranch(w, weights, false);
  const outputs = noPast.outputs.map((o) => ({ ...o, name: o.name.slice('no_past/'.length) }));
  g.nodeN('If', [useCache], outputs.length, { then_branch: { graph: withPast }, else_branch: { graph: noPast } }, outputs.map((o) => o.name));
  for (const o of outputs) g.output(o.name, o.name, o.type, o.shape);
  return g;
}
