// An independent plain-TypeScript forward pass of a Llama (float64 arithmetic over the
// float32 weights), with an optional KV cache. Tests compare the ONNX graph against it.
import { inverseFrequencies, type LlamaWeights } from './llama/weights.js';

export interface KvCache {
  /** Per layer: keys and values per kv head, one Float64Array(headDim) per position. */
  keys: Float64Array[][][];
  values: Float64Array[][][];
  /** Number of positions held. */
  length: number;
}

export function emptyCache(w: LlamaWeights): KvCache {
  const mk = () => Array.from({ length: w.config.layers }, () => Array.from({ length: w.config.kvHeads }, () => [] as Float64Array[]));
  return { keys: mk(), values: mk(), length: 0 };
}

function matVec(x: Float64Array, W: Float32Array, rows: number, cols: number): Float64Array {
  const y = new Float64Array(cols);
  for (let i = 0; i < rows; i++) {
    const xi = x[i]!;
    if (xi === 0) continue;
    const off = i * cols;
    for (let j = 0; j < cols; j++) y[j]! += xi * W[off + j]!;
  }
  return y;
}

function rmsNorm(x: Float64Array, w: Float32Array, eps: number): Float64Array {
  let s = 0;
  for (const v of x) s += v * v;
  const k = 1 / Math.sqrt(s / x.length + eps);
  return x.map((v, i) => v * k * w[i]!);
}

function rope(x: Float64Array, pos: number, inv: Float32Array): Float64Array {
  const half = inv.length;
  const out = new Float64Array(x.length);
  for (let i = 0; i < half; i++) {
    const a = Math.fround(pos * inv[i]!);
    const c = Math.cos(a);
    const s = Math.sin(a);
    out[i] = x[i]! * c - x[i + half]! * s;
    out[i + half] = x[i + half]! * c + x[i]! * s;
  }
  return out;
}

/**
 * Runs `tokens` (at `positions`) through the model, appending to `cache`; returns the
 * logits of each new position. Keys earlier in the cache are all attended to.
 */
export function forward(w: LlamaWeights, tokens: readonly number[], positions: readonly number[], cache: KvCache = emptyCache(w)): Float64Array[] {
  const c = w.config;
  const { hidden: H, heads, kvHeads: KV, headDim: D, intermediate: I, vocabSize: V } = c;
  const rep = heads / KV;
  const inv = inverseFrequencies(c);
  const out: Float64Array[] = [];
  for (let t = 0; t < tokens.length; t++) {
    const tok = tokens[t]!;
    const pos = positions[t]!;
    let x = Float64Array.from(w.embed.subarray(tok * H, (tok + 1) * H));
    for (let l = 0; l < c.layers; l++) {
      const L = w.layers[l]!;
      const h = rmsNorm(x, L.inputNorm, c.rmsEps);
      const q = matVec(h, L.q, H, heads * D);
      const k = matVec(h, L.k, H, KV * D);
      const v = matVec(h, L.v, H, KV * D);
      for (let g = 0; g < KV; g++) {
        cache.keys[l]![g]!.push(rope(k.subarray(g * D, (g + 1) * D), pos, inv));
        cache.values[l]![g]!.push(v.slice(g * D, (g + 1) * D));
      }
      const ctx = new Float64Array(heads * D);
      for (let hd = 0; hd < heads; hd++) {
        const g = Math.floor(hd / rep);
        const qh = rope(q.subarray(hd * D, (hd + 1) * D), pos, inv);
        const keys = cache.keys[l]![g]!;
        const scores = keys.map((kk) => {
          let s = 0;
          for (let d = 0; d < D; d++) s += qh[d]! * kk[d]!;
          return s / Math.sqrt(D);
        });
        const m = Math.max(...scores);
        const e = scores.map((s) => Math.exp(s - m));
        const z = e.reduce((a, b) => a + b, 0);
        const vals = cache.values[l]![g]!;
        for (let j = 0; j < vals.length; j++) {
          const p = e[j]! / z;
          const vv = vals[j]!;
          for (let d = 0; d < D; d++) ctx[hd * D + d]! += p * vv[d]!;
        }
      }
      const attn = matVec(ctx, L.o, heads * D, H);
      x = x.map((v2, i) => v2 + attn[i]!);
      const h2 = rmsNorm(x, L.postNorm, c.rmsEps);
      const gate = matVec(h2, L.gate, H, I);
      const up = matVec(h2, L.up, H, I);
      const act = gate.map((gv, i) => (gv / (1 + Math.exp(-gv))) * up[i]!);
      const mlp = matVec(act, L.down, I, H);
      x = x.map((v2, i) => v2 + mlp[i]!);
    }
    out.push(matVec(rmsNorm(x, w.finalNorm, c.rmsEps), w.lmHead, H, V));
    cache.length++;
  }
  return out;
}

export function argmax(a: ArrayLike<number>): number {
  let b = 0;
  for (let i = 1; i < a.length; i++) if (a[i]! > a[b]!) b = i;
  return b;
}

/** The greedy continuation of `prompt` until one of `eos` or `maxNew` tokens. */
export function greedy(w: LlamaWeights, prompt: readonly number[], maxNew: number, eos: readonly number[]): { tokens: number[]; margins: number[] } {
  const cache = emptyCache(w);
  let logits = forward(w, prompt, prompt.map((_, i) => i), cache).at(-1)!;
  const tokens: number[] = [];
  const margins: number[] = [];
  for (let n = 0; n < maxNew; n++) {
    const best = argmax(logits);
    let second = -Infinity;
    for (let i = 0; i < logits.length; i++) if (i !== best && logits[i]! > second) second = logits[i]!;
    margins.push(logits[best]! - second);
    tokens.push(best);
    if (eos.includes(best)) break;
    logits = forward(w, [best], [cache.length], cache)[0]!;
  }
  return { tokens, margins };
}
