// svc/tiny-embed: token embeddings built from hashed character n-grams of each token's
// text, so tokens that share spelling (cat / cats) and sentences that share words land
// close together after mean pooling. The encoder layer carries small random weights.
import { Rng } from '../rng.js';
import { BpeEncoder, type Bpe } from '../tokenizer/bpe.js';
import type { BertConfig, BertWeights } from './weights.js';

export const TINY_EMBED_CONFIG: BertConfig = {
  vocabSize: 512,
  hidden: 128,
  layers: 1,
  heads: 4,
  intermediate: 256,
  maxPositions: 2048,
  typeVocab: 2,
  outputDim: 1536,
  eps: 1e-12,
};

function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** A signed hashed bag of character 1-, 2- and 3-grams (and the whole word), unit RMS. */
export function ngramVector(text: string, dim: number): Float32Array {
  const v = new Float32Array(dim);
  const w = `<${text.trim().toLowerCase()}>`;
  const grams: [string, number][] = [[`w:${w}`, 2]];
  for (let n = 1; n <= 3; n++) for (let i = 0; i + n <= w.length; i++) grams.push([w.slice(i, i + n), n]);
  for (const [g, weight] of grams) {
    const h = fnv1a(g);
    v[h % dim]! += (h & 0x80000000 ? -1 : 1) * weight;
  }
  let s = 0;
  for (const x of v) s += x * x;
  const k = s > 0 ? Math.sqrt(dim / s) : 0;
  return v.map((x) => x * k);
}

export function designTinyEmbed(bpe: Bpe, seed: number): BertWeights {
  const config = { ...TINY_EMBED_CONFIG, vocabSize: bpe.vocab.length };
  const { hidden: h, intermediate: I, vocabSize: V, outputDim: out } = config;
  const rng = new Rng(seed);
  const enc = new BpeEncoder(bpe);
  const word = new Float32Array(V * h);
  for (let t = 0; t < V; t++) {
    const text = new TextDecoder().decode(enc.tokenBytes(t));
    const vec = enc.isSpecial(t) || !/\S/.test(text) ? Float32Array.from(rng.unit(h), (x) => x * Math.sqrt(h)) : ngramVector(text, h);
    word.set(vec, t * h);
  }
  const small = (n: number, std = 0.02) => rng.normals(n, std);
  const ones = (n: number) => new Float32Array(n).fill(1);
  const zeros = (n: number) => new Float32Array(n);
  const layers = Array.from({ length: config.layers }, () => ({
    q: small(h * h), qb: zeros(h),
    k: small(h * h), kb: zeros(h),
    v: small(h * h), vb: zeros(h),
    o: small(h * h), ob: zeros(h),
    ln1w: ones(h), ln1b: zeros(h),
    ff1: small(h * I), ff1b: zeros(I),
    ff2: small(I * h), ff2b: zeros(h),
    ln2w: ones(h), ln2b: zeros(h),
  }));
  return {
    config,
    word,
    position: small(config.maxPositions * h, 0.05),
    tokenType: small(config.typeVocab * h, 0.05),
    embLnW: ones(h),
    embLnB: zeros(h),
    layers,
    proj: rng.normals(h * out, 1 / Math.sqrt(h)),
    projB: zeros(out),
  };
}
