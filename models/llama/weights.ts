// Llama weights held in memory: matrices are row-major [in, out] (y = x · W),
// exactly as they are written into the ONNX graph and read by the reference pass.
import { Rng } from '../rng.js';

export interface LlamaConfig {
  vocabSize: number;
  hidden: number;
  layers: number;
  heads: number;
  kvHeads: number;
  headDim: number;
  intermediate: number;
  ropeTheta: number;
  rmsEps: number;
  maxPositions: number;
}

export interface LlamaLayer {
  inputNorm: Float32Array; // [H]
  q: Float32Array; // [H, heads*D]
  k: Float32Array; // [H, kv*D]
  v: Float32Array; // [H, kv*D]
  o: Float32Array; // [heads*D, H]
  postNorm: Float32Array; // [H]
  gate: Float32Array; // [H, I]
  up: Float32Array; // [H, I]
  down: Float32Array; // [I, H]
}

export interface LlamaWeights {
  config: LlamaConfig;
  embed: Float32Array; // [V, H]
  layers: LlamaLayer[];
  finalNorm: Float32Array; // [H]
  lmHead: Float32Array; // [H, V]
}

export function parameterCount(w: LlamaWeights): number {
  let n = w.embed.length + w.finalNorm.length + w.lmHead.length;
  for (const l of w.layers) for (const t of Object.values(l)) n += (t as Float32Array).length;
  return n;
}

/** Random weights: the initialisation of a freshly built model, scaled so activations stay O(1). */
export function randomLlama(config: LlamaConfig, rng: Rng, std = 0.02): LlamaWeights {
  const { hidden: H, heads, kvHeads, headDim: D, intermediate: I, vocabSize: V } = config;
  const ones = (n: number) => new Float32Array(n).fill(1);
  const layers: LlamaLayer[] = [];
  for (let l = 0; l < config.layers; l++) {
    layers.push({
      inputNorm: ones(H),
      q: rng.normals(H * heads * D, std),
      k: rng.normals(H * kvHeads * D, std),
      v: rng.normals(H * kvHeads * D, std),
      o: rng.normals(heads * D * H, std / Math.sqrt(2 * config.layers)),
      postNorm: ones(H),
      gate: rng.normals(H * I, std),
      up: rng.normals(H * I, std),
      down: rng.normals(I * H, std / Math.sqrt(2 * config.layers)),
    });
  }
  return { config, embed: rng.normals(V * H, 1), layers, finalNorm: ones(H), lmHead: rng.normals(H * V, 1 / Math.sqrt(H)) };
}

/** inv_freq as float32, the same numbers the graph holds. */
export function inverseFrequencies(config: LlamaConfig): Float32Array {
  const half = config.headDim / 2;
  const f = new Float32Array(half);
  for (let i = 0; i < half; i++) f[i] = 1 / Math.pow(config.ropeTheta, (2 * i) / config.headDim);
  return f;
}
