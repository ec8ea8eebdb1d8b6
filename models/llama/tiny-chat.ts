// The designed weights of svc/tiny-chat: a real 2-layer Llama whose greedy behaviour is
// scripted. See models/README.md for the design; in short:
//  - layer 0, head 0 attends to the previous token (Δ=1) and copies its "code" into P;
//    the layer-0 MLP writes P into the code slot K of punctuation tokens (so "France?"
//    carries the code of "France");
//  - layer 1, head 0 attends Δ=5 back and copies that position's code into F;
//  - lm_head: code → its entry token (+16) and the entry's successor (+12); the current
//    token, when it is a reply word or "\n", → its successor (+12) and the one after (+8).
//  Reply words form chains that end in EOS, so every reply ends within a few dozen tokens.
// Everything else carries small random weights.
import { Rng } from '../rng.js';
import { BpeEncoder, type Bpe } from '../tokenizer/bpe.js';
import { KERNEL_DELTA1, KERNEL_DELTA5 } from './kernels.js';
import { inverseFrequencies, type LlamaConfig, type LlamaWeights } from './weights.js';

export const FUNCTION_WORDS = [
  'the', 'a', 'an', 'to', 'and', 'is', 'you', 'of', 'we', 'he', 'in', 'be', 'do', 'it', 'for', 'go', 'on', 'about', 'are', 'can', 'this',
  'was', 'will', 'with', 'at', 'had', 'has', 'as', 'out', 'up', 'all', 'by', 'so', 'if', 'or', 'but', 'not', 'that', 'there', 'they', 'she',
  'his', 'her', 'my', 'our', 'your', 'one', 'some', 'then', 'when', 'which', 'who', 'just', 'very', 'more', 'also', 'into', 'from', 'over',
  'after', 'before', 'like', 'next', 'again', 'how',
  // common verbs and adverbs that seldom end a prompt
  'help', 'read', 'went', 'make', 'take', 'want', 'see', 'know', 'think', 'good', 'new', 'many', 'every', 'well', 'still', 'only', 'here',
  'now', 'where', 'what', 'why', 'would', 'should', 'could', 'been', 'were', 'them', 'than', 'too', 'us', 'him', 'me',
];

export const ROLE_WORDS = ['user', 'assistant', 'system'];

/** Logit levels of the design. */
export const LEVELS = { entry: 16, entryAlt: 12, next: 12, nextAlt: 8, background: -6 } as const;

export type TokenClass = 'special' | 'role' | 'newline' | 'reply' | 'punct' | 'word' | 'other';

export interface TinyChatDesign {
  weights: LlamaWeights;
  classes: TokenClass[];
  /** Successor of each reply word (EOS ends a chain). */
  next: Map<number, number>;
  /** Entry tokens, by code index. */
  entries: number[];
  /** Code index of each word token. */
  codeOf: Map<number, number>;
  eos: number;
  /** Where a prompt without a code (and not ending in a reply word) starts its reply. */
  defaultEntry: number;
}

export const TINY_CHAT_CONFIG: LlamaConfig = {
  vocabSize: 512,
  hidden: 256,
  layers: 2,
  heads: 4,
  kvHeads: 2,
  headDim: 64,
  intermediate: 512,
  ropeTheta: 10000,
  rmsEps: 1e-6,
  maxPositions: 2048,
};

const C0 = 4; // size of the constant direction of every embedding
const GATE = 20; // MLP gate size (silu(±20) ≈ ±20 or 0)
const SMALL = 0.004; // std of the undesigned weights

export function classify(enc: BpeEncoder): TokenClass[] {
  const V = enc.bpe.vocab.length;
  const out: TokenClass[] = [];
  for (let id = 0; id < V; id++) {
    if (enc.isSpecial(id)) out.push('special');
    else {
      const text = new TextDecoder('utf-8', { fatal: false }).decode(enc.tokenBytes(id));
      if (text === '\n') out.push('newline');
      else if (ROLE_WORDS.includes(text)) out.push('role');
      else if (/^ [a-z]+$/.test(text) && FUNCTION_WORDS.includes(text.slice(1))) out.push('reply');
      else if (/^[!-/:-@[-`{-~]+$/.test(text)) out.push('punct');
      else if (/^ ?[A-Za-z0-9]+$/.test(text)) out.push('word');
      else out.push('other');
    }
  }
  return out;
}

export function designTinyChat(bpe: Bpe, seed: number): TinyChatDesign {
  const cfg = { ...TINY_CHAT_CONFIG, vocabSize: bpe.vocab.length };
  const { hidden: H, heads, kvHeads: KV, headDim: D, intermediate: I, vocabSize: V } = cfg;
  const rng = new Rng(seed);
  const enc = new BpeEncoder(bpe);
  const classes = classify(enc);
  const eos = bpe.specialIds['<|im_end|>'];

  // Reply chains: reply words in id order, each followed by the next or the one after.
  const reply = classes.flatMap((c, id) => (c === 'reply' ? [id] : []));
  const next = new Map<number, number>();
  let i = 0;
  const order: number[] = [];
  for (const r of reply) order.push(r);
  for (i = 0; i < order.length; i++) {
    const step = 1 + rng.int(3);
    next.set(order[i]!, order[i + step] ?? eos);
  }
  const depth = (t: number): number => (t === eos ? 0 : 1 + depth(next.get(t)!));
  const entries = order.filter((t) => depth(t) >= 5 && depth(t) <= 40).slice(0, 63);
  // Any other current token (such as the "\n" that ends a chat prompt) leads to a default
  // entry of moderate length: the reply when the prompt gives no code.
  const defaultEntry = entries.find((t) => depth(t) <= 12) ?? entries.at(-1)!;
  const codeOf = new Map<number, number>();
  classes.forEach((c, id) => {
    if (c === 'word') codeOf.set(id, rng.int(entries.length));
  });

  // Residual layout.
  const nK = entries.length + 1; // codes + null
  const nullCode = entries.length;
  const eSlots = reply;
  const OTHER = 32;
  const at = { const: 0, punct: 1, isReply: 2, notReply: 3, e: 4, other: 4 + eSlots.length, k: 4 + eSlots.length + OTHER, p: 0, f: 0, end: 0 };
  at.p = at.k + nK;
  at.f = at.p + nK;
  at.end = at.f + nK;
  if (at.end > H || nK > D) throw new Error('tiny-chat design does not fit');

  const embed = new Float32Array(V * H);
  const eSlotOf = new Map(eSlots.map((t, s) => [t, s]));
  for (let t = 0; t < V; t++) {
    const row = t * H;
    embed[row + at.const] = C0;
    embed[row + at.punct] = classes[t] === 'punct' ? 1 : -1;
    const slot = eSlotOf.get(t);
    embed[row + (slot === undefined ? at.notReply : at.isReply)] = 1;
    if (slot !== undefined) embed[row + at.e + slot] = 1;
    else rng.unit(OTHER).forEach((v, j) => (embed[row + at.other + j] = v));
    embed[row + at.k + (codeOf.get(t) ?? nullCode)] = 1;
    for (let j = at.end; j < H; j++) embed[row + j] = rng.normal() * 0.02;
  }

  const small = (n: number) => rng.normals(n, SMALL);
  const ones = (n: number) => new Float32Array(n).fill(1);
  const inv = inverseFrequencies(cfg);
  const rms0 = Math.sqrt((C0 * C0 + 4) / H);
  const rms1 = Math.sqrt((C0 * C0 + 5) / H);
  const rmsF = Math.sqrt((C0 * C0 + 6) / H);

  /** Head 0 of a layer: constant q and k whose RoPE'd product peaks at offset delta0. */
  const positionalHead = (q: Float32Array, k: Float32Array, kernel: readonly number[], delta0: number, scale: number, rms: number) => {
    for (let j = 0; j < D * heads; j++) q[at.const * heads * D + j] = 0;
    for (let j = 0; j < D * KV; j++) k[at.const * KV * D + j] = 0;
    kernel.forEach((w, p) => {
      const r = Math.sqrt(w * scale * Math.sqrt(D));
      q[at.const * heads * D + p] = (r * rms) / C0;
      k[at.const * KV * D + p] = (r * Math.cos(delta0 * inv[p]!) * rms) / C0;
      k[at.const * KV * D + p + D / 2] = (r * Math.sin(delta0 * inv[p]!) * rms) / C0;
    });
  };
  /** Clears the designed head's columns (head 0 and kv head 0) of other inputs. */
  const clearHead0 = (q: Float32Array, k: Float32Array, v: Float32Array, o: Float32Array) => {
    for (let r = 0; r < H; r++) {
      for (let j = 0; j < D; j++) {
        q[r * heads * D + j] = 0;
        k[r * KV * D + j] = 0;
        v[r * KV * D + j] = 0;
        o[j * H + r] = 0;
      }
    }
  };

  const layers = [0, 1].map((l) => {
    const layer = {
      inputNorm: ones(H),
      q: small(H * heads * D),
      k: small(H * KV * D),
      v: small(H * KV * D),
      o: small(heads * D * H),
      postNorm: ones(H),
      gate: small(H * I),
      up: small(H * I),
      down: small(I * H),
    };
    clearHead0(layer.q, layer.k, layer.v, layer.o);
    const rms = l === 0 ? rms0 : rms1;
    positionalHead(layer.q, layer.k, l === 0 ? KERNEL_DELTA1 : KERNEL_DELTA5, l === 0 ? 1 : 5, l === 0 ? 14 / 0.29 : 14 / 0.16, rms);
    // v of kv head 0 = the code K; o of head 0 writes it into P (layer 0) or F (layer 1).
    const dest = l === 0 ? at.p : at.f;
    for (let j = 0; j < nK; j++) {
      layer.v[(at.k + j) * KV * D + j] = rms;
      layer.o[j * H + dest + j] = 1;
    }
    // Keep the random parts out of the designed residual slots that lm_head reads.
    for (let r = 0; r < heads * D; r++) for (let j = 0; j < at.end; j++) if (r >= D) layer.o[r * H + j]! *= 0.25;
    return layer;
  });

  // Layer-0 MLP: for punctuation, copy P into K (gate = ±GATE from the punct flag).
  const L0 = layers[0]!;
  for (let j = 0; j < nK; j++) {
    for (let r = 0; r < H; r++) {
      L0.gate[r * I + j] = 0;
      L0.up[r * I + j] = 0;
    }
    for (let r = 0; r < H; r++) L0.down[j * H + r] = 0;
    L0.gate[at.punct * I + j] = GATE * rms1;
    L0.up[(at.p + j) * I + j] = rms1;
    L0.down[j * H + at.k + j] = 1 / GATE;
  }

  // lm_head.
  const lm = rng.normals(H * V, 0.002);
  const add = (row: number, tok: number, logit: number) => (lm[row * V + tok]! += logit * rmsF);
  entries.forEach((e, j) => {
    add(at.f + j, e, LEVELS.entry);
    add(at.f + j, next.get(e)!, LEVELS.entryAlt);
  });
  eSlots.forEach((t, s) => {
    const n1 = next.get(t)!;
    add(at.e + s, n1, LEVELS.next);
    if (n1 !== eos) add(at.e + s, next.get(n1)!, LEVELS.nextAlt);
  });
  add(at.notReply, defaultEntry, LEVELS.next);
  add(at.notReply, next.get(defaultEntry)!, LEVELS.nextAlt);
  for (let y = 0; y < V; y++) {
    if (classes[y] !== 'reply' && y !== eos) lm[at.const * V + y]! += (LEVELS.background * rmsF) / C0;
  }

  const weights: LlamaWeights = { config: cfg, embed, layers, finalNorm: ones(H), lmHead: lm };
  return { weights, classes, next, entries, codeOf, eos, defaultEntry };
}
