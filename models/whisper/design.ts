// The weights of svc/tiny-whisper: a real Whisper (conv stem, pre-LN encoder, decoder with
// causal self-attention and cross-attention) whose greedy transcripts are scripted, so tests get
// short, audio-dependent texts that end, and timestamps when asked:
//  - the encoder is random: different audio gives different encoder states;
//  - cross-attention heads with random queries (from the position and the current token) over
//    random keys write an audio-dependent "content" vector (less the window's average, which
//    mirror heads subtract), which the output projection reads against a random vector per text
//    token: which words come out depends on the audio; whole words (" the", " and", …) carry a
//    bonus, so words split on spaces, and the current word a penalty;
//  - the schedule (schedule.ts: EOS from the 16th step, timestamps at theirs) is counted from
//    <|startoftranscript|>: layer 0, head 1 marks every token from it on, layer 1, head 0 attends
//    evenly to those and reads 1/(r + 1) off its share on <|startoftranscript|>, and layer 1's MLP
//    turns that count into the schedule, so a prompt before it changes no step;
//  - layer 0, head 0 attends to <|notimestamps|> when the prompt has it and sets a "mode" flag that
//    sinks every timestamp logit: without timestamps the transcript is text only, with them it is
//    <|0.00|> words <|0.60|><|0.60|> words <|1.00|> EOS;
//  - layer 2's cross-attention heads (the alignment heads) look at their word's frame, through
//    encoder channels that carry only positions, so word timestamps spread over the first second.
// Exact reads pass LayerNorm unchanged (layout.ts): flags against a dim nothing writes, the anchor as
// the difference of its pair, and proj_out's columns summing to zero.
// The output projection (proj_out) is its own matrix here, not the embedding's transpose: the
// ONNX interface is the same, and the input and output sides can be designed apart.
import { Rng } from '../rng.js';
import { ANCHOR, DIM, encoderAlignDims, encoderReferenceDim, readAnchor, readFlag } from './layout.js';
import { SCHEDULE, alignFrame, scheduleMlp } from './schedule.js';
import type { WhisperVocab } from './vocab.js';
import { sinusoids, type Attention, type DecoderLayer, type EncoderLayer, type Mlp, type Norm, type WhisperDims, type WhisperWeights } from './weights.js';

export { SCHEDULE, alignFrame };

/** The fixture's shapes: whisper-tiny's layout, scaled down. */
export const TINY_WHISPER_DIMS: Omit<WhisperDims, 'vocabSize'> = {
  dModel: 64,
  encoderLayers: 2,
  encoderHeads: 4,
  encoderFfn: 128,
  decoderLayers: 3,
  decoderHeads: 4,
  decoderFfn: 128,
  melBins: 80,
  sourcePositions: 1500,
  targetPositions: 448,
};

/** Alignment heads for word timestamps: the cross-attention heads of the last layer, which look at their word's frames. */
export const ALIGNMENT_HEADS: [number, number][] = [[2, 0], [2, 1], [2, 2], [2, 3]];

const zeros = (n: number) => new Float32Array(n);
const ones = (n: number) => new Float32Array(n).fill(1);
const norm = (D: number): Norm => ({ weight: ones(D), bias: zeros(D) });

function randomAttention(rng: Rng, D: number, std: number, outStd: number): Attention {
  return { q: rng.normals(D * D, std), qBias: zeros(D), k: rng.normals(D * D, std), v: rng.normals(D * D, std), vBias: zeros(D), out: rng.normals(D * D, outStd), outBias: zeros(D) };
}

function randomMlp(rng: Rng, D: number, F: number, outStd: number): Mlp {
  return { fc1: rng.normals(D * F, 1 / Math.sqrt(D)), fc1Bias: rng.normals(F, 0.1), fc2: rng.normals(F * D, outStd), fc2Bias: zeros(D) };
}

function zeroAttention(D: number): Attention {
  return { q: zeros(D * D), qBias: zeros(D), k: zeros(D * D), v: zeros(D * D), vBias: zeros(D), out: zeros(D * D), outBias: zeros(D) };
}

/** Random rows `[from, to)` × all columns of a [D, D] matrix (the rest zero). */
function rowsOnly(rng: Rng, D: number, [from, to]: readonly [number, number], std: number): Float32Array {
  const m = zeros(D * D);
  for (let r = from; r < to; r++) for (let c = 0; c < D; c++) m[r * D + c] = rng.normal() * std;
  return m;
}

/** Random all rows × columns `[from, to)` (the rest zero). */
function columnsOnly(rng: Rng, D: number, [from, to]: readonly [number, number], std: number): Float32Array {
  const m = zeros(D * D);
  for (let r = 0; r < D; r++) for (let c = from; c < to; c++) m[r * D + c] = rng.normal() * std;
  return m;
}

function encoder(rng: Rng, dims: WhisperDims) {
  const { dModel: D, melBins: M, encoderFfn: F } = dims;
  const layers: EncoderLayer[] = Array.from({ length: dims.encoderLayers }, () => ({
    selfNorm: norm(D),
    self: randomAttention(rng, D, 1 / Math.sqrt(D), 0.5 / Math.sqrt(D)),
    mlpNorm: norm(D),
    mlp: randomMlp(rng, D, F, 0.5 / Math.sqrt(F)),
  }));
  const conv2 = rng.normals(D * D * 3, 1.5 / Math.sqrt(D * 3));
  const conv2Bias = rng.normals(D, 0.1);
  const positions = sinusoids(dims.sourcePositions, D);
  const reserved = [...encoderAlignDims(D), encoderReferenceDim(D)];
  for (const c of reserved) {
    conv2.fill(0, c * D * 3, (c + 1) * D * 3);
    conv2Bias[c] = 0;
    for (const L of layers) {
      for (let r = 0; r < D; r++) L.self.out[r * D + c] = 0;
      for (let r = 0; r < F; r++) L.mlp.fc2[r * D + c] = 0;
    }
  }
  for (let t = 0; t < dims.sourcePositions; t++) positions[t * D + encoderReferenceDim(D)] = 0;
  return {
    conv1: rng.normals(D * M * 3, 1.5 / Math.sqrt(M * 3)),
    conv1Bias: rng.normals(D, 0.1),
    conv2,
    conv2Bias,
    encoderPositions: positions,
    encoderLayers: layers,
    encoderNorm: norm(D),
  };
}

/**
 * Every head of `cross` looks at the frame its position codes: keys are the encoder's position
 * channels less the zero reference channel (which cancels LayerNorm's mean), queries the
 * position's align code, so score(j) ∝ Σ_c cos(ω_c (j − frame)), peaked at the frame.
 */
function alignmentHeads(cross: Attention, D: number, hd: number): void {
  const channels = encoderAlignDims(D);
  cross.q.fill(0);
  cross.k.fill(0);
  for (let h = 0; h < D / hd; h++) {
    // Sharp enough that a side lobe (Σ cos ≈ 4 of 6, at 865 frames) weighs far less than 1/1500.
    const sharpness = 20 + 5 * h;
    channels.forEach((c, m) => {
      cross.k[c * D + h * hd + m] = 1;
      cross.k[encoderReferenceDim(D) * D + h * hd + m] = -1;
      cross.q[(DIM.align[0] + m) * D + h * hd + m] = sharpness;
    });
  }
}

/** Is this text token a whole lowercase word after a space (GPT-2's Ġ)? */
const isWord = (token: string) => /^Ġ[a-z]{2,}$/.test(token);

/** Random values with mean 0 and norm `norm` (so every position's row has the same norm and mean). */
function fixedNorm(rng: Rng, n: number, norm: number): number[] {
  const v = Array.from({ length: n }, () => rng.normal());
  const mean = v.reduce((a, b) => a + b, 0) / n;
  const centred = v.map((x) => x - mean);
  const k = norm / Math.sqrt(centred.reduce((a, b) => a + b * b, 0));
  return centred.map((x) => x * k);
}

/** LayerNormalization of `x` (weight 1, bias 0). */
function layerNormed(x: Float32Array): Float64Array {
  const mean = x.reduce((a, b) => a + b, 0) / x.length;
  const scale = layerNormScale(x);
  return Float64Array.from(x, (v) => (v - mean) / scale);
}

/** What LayerNormalization divides `x` by. */
function layerNormScale(x: Float32Array): number {
  const mean = x.reduce((a, b) => a + b, 0) / x.length;
  return Math.sqrt(x.reduce((a, b) => a + (b - mean) ** 2, 0) / x.length + 1e-5);
}

export function designTinyWhisper(vocab: WhisperVocab, seed: number): WhisperWeights {
  const dims: WhisperDims = { ...TINY_WHISPER_DIMS, vocabSize: vocab.vocabSize };
  const { dModel: D, decoderFfn: F, vocabSize: V, targetPositions: T } = dims;
  const hd = D / dims.decoderHeads;
  const rng = new Rng(seed);
  const enc = encoder(rng, dims);

  // Token embeddings: the anchor, a small random identity in the query dims (the next word
  // depends on the current one), and the flags of <|notimestamps|> and <|startoftranscript|>
  // (whose query dims stay empty, so its row's scale at every position is known).
  const embed = zeros(V * D);
  for (let t = 0; t < V; t++) {
    embed[t * D + DIM.anchorPlus] = ANCHOR;
    embed[t * D + DIM.anchorMinus] = -ANCHOR;
    if (t !== vocab.sot) for (let d = DIM.query[0]; d < DIM.query[1]; d++) embed[t * D + d] = rng.normal() * 0.2;
  }
  embed[vocab.noTimestamps * D + DIM.noTimestampsFlag] = 1;
  embed[vocab.sot * D + DIM.sotFlag] = 1;

  // Positions: random queries and content (what varies along the transcript), each part of one
  // norm and mean 0 at every position, and the constant word and special drives.
  const positions = zeros(T * D);
  for (let q = 0; q < T; q++) {
    const row = q * D;
    fixedNorm(rng, DIM.query[1] - DIM.query[0], 1).forEach((v, i) => (positions[row + DIM.query[0] + i] = v));
    fixedNorm(rng, DIM.content[1] - DIM.content[0], 3).forEach((v, i) => (positions[row + DIM.content[0] + i] = v));
    positions[row + DIM.word] = 1;
    positions[row + DIM.special] = 1;
  }

  // <|startoftranscript|>'s LayerNorm scale at layers 0 and 1 (the same at every position): the
  // flags copied from it are calibrated to 1 with it.
  const sotRow = Float32Array.from({ length: D }, (_, d) => embed[vocab.sot * D + d]! + positions[d]!);
  const sotScale0 = layerNormScale(sotRow);
  sotRow[DIM.afterSot] = 1;
  const sotScale1 = layerNormScale(sotRow);

  const layers: DecoderLayer[] = [];
  for (let i = 0; i < dims.decoderLayers; i++) {
    const self = zeroAttention(D);
    let cross = zeroAttention(D);
    let mlp: Mlp = { fc1: zeros(D * F), fc1Bias: zeros(F), fc2: zeros(F * D), fc2Bias: zeros(D) };
    if (i === 0) {
      // Head 0 finds <|notimestamps|> (score ≈ 16 against 0) and copies its flag into the mode dim.
      readAnchor(self.q, D, 0, 3.2);
      readFlag(self.k, D, 0, DIM.noTimestampsFlag, 3.2);
      readFlag(self.v, D, 0, DIM.noTimestampsFlag, 1);
      self.out[0 * D + DIM.mode] = 0.8;
      // Head 1 finds <|startoftranscript|> (score ≈ 25) and writes 1 into afterSot from it on.
      readAnchor(self.q, D, hd, 4);
      readFlag(self.k, D, hd, DIM.sotFlag, 4);
      readFlag(self.v, D, hd, DIM.sotFlag, 1);
      self.out[hd * D + DIM.afterSot] = sotScale0;
      // No cross-attention and no MLP here: <|startoftranscript|>'s scale at layer 1 stays known.
    } else if (i === 1) {
      // Heads 1–3: a little history, from the query dims into the content.
      self.q = rowsOnly(rng, D, DIM.query, 0.8);
      self.k = rowsOnly(rng, D, DIM.query, 0.8);
      self.v = rowsOnly(rng, D, DIM.query, 0.8);
      self.out = columnsOnly(rng, D, DIM.content, 0.15);
      for (const m of [self.q, self.k, self.v]) for (let r = 0; r < D; r++) m.fill(0, r * D, r * D + hd);
      self.out.fill(0, 0, hd * D);
      // Head 0 counts: keys 0 from <|startoftranscript|> on, about −15 before it (afterSot read
      // against the anchor, so LayerNorm's scale cancels), a constant query: even attention over
      // the r + 1 tokens since it, and a value only on it: 1/(r + 1) into DIM.count.
      readAnchor(self.q, D, 0, 3);
      readAnchor(self.k, D, 0, -2.8);
      readFlag(self.k, D, 0, DIM.afterSot, 2.8 * ANCHOR);
      readFlag(self.v, D, 0, DIM.sotFlag, 1);
      self.out[0 * D + DIM.count] = sotScale1;
      cross = broadCross(rng, D, 3);
      scheduleMlp(mlp, D, F, ANCHOR);
    } else {
      cross = broadCross(rng, D, 0);
      alignmentHeads(cross, D, hd);
      // Head 0's values (the audio at the word's frames) add to the content.
      cross.out = columnsOnly(rng, D, DIM.content, 1.2 / Math.sqrt(D));
      cross.out.fill(0, hd * D);
      mlp = randomMlp(rng, D, F, 0.01);
      for (let n = 0; n < F; n++) mlp.fc2[n * D + DIM.zero] = 0;
    }
    layers.push({ selfNorm: norm(D), self, crossNorm: norm(D), cross, mlpNorm: norm(D), mlp });
  }
  // Layer 1's heads 1 and 2 take the window's average out of what layer 1's head 0 and layer 2's
  // head 0 hear; head 3 is left empty.
  const [, l1, l2] = layers as [DecoderLayer, DecoderLayer, DecoderLayer];
  averageOut(l1.cross, 1, l1.cross, 0, D, hd);
  averageOut(l1.cross, 2, l2.cross, 0, D, hd);
  for (const m of [l1.cross.q, l1.cross.k, l1.cross.v]) for (let r = 0; r < D; r++) m.fill(0, r * D + 3 * hd, r * D + 4 * hd);
  l1.cross.out.fill(0, 3 * hd * D, 4 * hd * D);

  // The content at position 0 that no audio changes: the position's own, and layer 1's history
  // heads on <|startoftranscript|> alone (it attends only to itself there), made orthogonal.
  const h0 = layerNormed(sotRow);
  const history = new Float64Array(D);
  const l1self = layers[1]!.self;
  for (let c = hd; c < D; c++) {
    let v = 0;
    for (let d = 0; d < D; d++) v += h0[d]! * l1self.v[d * D + c]!;
    for (let d = 0; d < D; d++) history[d]! += v * l1self.out[c * D + d]!;
  }
  const own = Float64Array.from(positions.subarray(DIM.content[0], DIM.content[1]));
  const heard = history.slice(DIM.content[0], DIM.content[1]);
  const ownNorm = own.reduce((a, x) => a + x * x, 0);
  const overlap = heard.reduce((a, x, j) => a + x * own[j]!, 0) / ownNorm;
  const fixedContentAtStart = [own, heard.map((x, j) => x - overlap * own[j]!)];

  // The output projection reads the designed dims.
  const proj = zeros(D * V);
  const set = (d: number, t: number, v: number) => (proj[d * V + t] = v);
  const contentDims = DIM.content[1] - DIM.content[0];
  const randomContent = (t: number, scale: number) => rng.unit(contentDims).forEach((v, j) => set(DIM.content[0] + j, t, v * scale));
  for (let t = 0; t < vocab.textSize; t++) {
    randomContent(t, 4);
    set(DIM.word, t, isWord(vocab.tokens[t]!) ? 14 : -14);
    // Against the token's own identity (in the query dims): the current word is seldom the next.
    for (let d = DIM.query[0]; d < DIM.query[1]; d++) set(d, t, -4 * embed[t * D + d]!);
  }
  set(DIM.eos, vocab.eot, 40);
  for (let id = vocab.eot + 1; id < vocab.timestampBegin; id++) {
    set(DIM.special, id, -40);
    // Languages also read the content: language detection depends on the audio. Detection reads
    // the step at <|startoftranscript|>, at position 0, where the content also holds two parts the
    // same for every audio (the position's own, and what layer 1's history heads make of it):
    // those are taken out of the language vectors, so what they compare is what was heard.
    if (id > vocab.sot && id < vocab.translate) {
      randomContent(id, 4);
      for (const fixed of fixedContentAtStart) {
        let dot = 0;
        let nn = 0;
        fixed.forEach((x, j) => ((dot += x * proj[(DIM.content[0] + j) * V + id]!), (nn += x * x)));
        if (nn > 0) fixed.forEach((x, j) => (proj[(DIM.content[0] + j) * V + id]! -= (dot / nn) * x));
      }
    }
  }
  const codes = [...new Set(SCHEDULE.timestampAt.values())];
  for (let k = 0; k < vocab.vocabSize - vocab.timestampBegin; k++) {
    const id = vocab.timestampBegin + k;
    set(DIM.timestamp, id, 40);
    set(DIM.mode, id, -400);
    if (codes.includes(k)) set(DIM.timestampCode[0] + codes.indexOf(k), id, 25);
  }

  // Each column sums to zero through the zero dim: the final LayerNorm's mean then cancels out of
  // every logit (Σ_d (x_d − μ)·w_d = Σ_d x_d·w_d), where it would otherwise tilt tokens by their column sums.
  for (let t = 0; t < V; t++) {
    let sum = 0;
    for (let d = 0; d < D; d++) if (d !== DIM.zero) sum += proj[d * V + t]!;
    proj[DIM.zero * V + t] = -sum;
  }

  return { dims, ...enc, embedTokens: embed, decoderPositions: positions, decoderLayers: layers, decoderNorm: norm(D), projOut: proj };
}

/**
 * Head `to` of `cross` becomes head `from` of `source` with a zero query (even attention over
 * every frame) and the opposite output: together they write what `from` heard less the average
 * over the whole window, so the part every window shares (which would pick the same word
 * everywhere, and the same language) cancels out. Both read the same encoder states.
 */
function averageOut(cross: Attention, to: number, source: Attention, from: number, D: number, hd: number): void {
  for (let r = 0; r < D; r++) {
    for (let c = 0; c < hd; c++) {
      cross.q[r * D + to * hd + c] = 0;
      cross.k[r * D + to * hd + c] = 0;
      cross.v[r * D + to * hd + c] = source.v[r * D + from * hd + c]!;
    }
  }
  for (let c = 0; c < hd; c++) for (let d = 0; d < D; d++) cross.out[(to * hd + c) * D + d] = -source.out[(from * hd + c) * D + d]!;
}

/** Cross-attention with random queries from the query dims and random keys and values over the encoder states, written into the content (scale `out`). */
function broadCross(rng: Rng, D: number, out: number): Attention {
  return {
    q: rowsOnly(rng, D, DIM.query, 1.34),
    qBias: zeros(D),
    k: rng.normals(D * D, 1.34 / Math.sqrt(D)),
    v: rng.normals(D * D, 1 / Math.sqrt(D)),
    vBias: zeros(D),
    out: columnsOnly(rng, D, DIM.content, out / Math.sqrt(D)),
    outBias: zeros(D),
  };
}
