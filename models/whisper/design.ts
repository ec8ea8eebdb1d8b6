// The weights of svc/tiny-whisper: a real Whisper (conv stem, pre-LN encoder, decoder with
// causal self-attention and cross-attention) whose greedy transcripts are scripted, so tests get
// short, audio-dependent texts that end, and timestamps when asked:
//  - the encoder is random: different audio gives different encoder states;
//  - the decoder's cross-attention (random queries from the position and the current token,
//    random keys over the encoder states) writes an audio-dependent "content" vector, which the
//    output projection reads against a random vector per text token: which words come out
//    depends on the audio; word tokens (" the", " and", …) carry a bonus, so words split on spaces;
//  - the learned decoder positions hold the schedule: EOS wins from position EOS_AT on, and
//    timestamps win at TIMESTAMP_AT (each a one-hot code picking its timestamp token);
//  - layer 0, head 0 of self-attention attends to <|notimestamps|> when the prompt has it and
//    writes a "mode" flag that pushes every timestamp logit far down: without timestamps the
//    transcript is text only, with them it is <|0.00|> words <|t1|><|t1|> words <|t2|> EOS.
// The output projection (proj_out) is its own matrix here, not the embedding's transpose: the
// ONNX interface is the same, and the input and output sides can be designed apart.
import { Rng } from '../rng.js';
import type { WhisperVocab } from './vocab.js';
import { sinusoids, type Attention, type DecoderLayer, type EncoderLayer, type Mlp, type Norm, type WhisperDims, type WhisperWeights } from './weights.js';

/** The fixture's shapes: whisper-tiny's layout, scaled down. */
export const TINY_WHISPER_DIMS: Omit<WhisperDims, 'vocabSize'> = {
  dModel: 64,
  encoderLayers: 2,
  encoderHeads: 4,
  encoderFfn: 128,
  decoderLayers: 2,
  decoderHeads: 4,
  decoderFfn: 128,
  melBins: 80,
  sourcePositions: 1500,
  targetPositions: 448,
};

/** Residual dimensions of the decoder design. */
const DIM = {
  anchorPlus: 0,
  anchorMinus: 1,
  noTimestampsFlag: 2,
  mode: 3,
  query: [4, 12] as const,
  eos: 12,
  timestamp: 13,
  word: 14,
  special: 15,
  timestampCode: [16, 24] as const,
  content: [24, 52] as const,
  /** The frame a word's cross-attention looks at, as the encoder's position channels code it. */
  align: [52, 64] as const,
};

/**
 * Encoder channels that carry only their position (conv2 and the layers write nothing there):
 * the sin and cos halves of Whisper's sinusoid channels 4, 6, …, 14 (periods 21 to 405 frames),
 * and a reference channel set to zero in the position table, which the alignment keys subtract so
 * that the final LayerNorm's mean cancels out.
 */
const ENCODER_ALIGN_CHANNELS = [4, 6, 8, 10, 12, 14];
const encoderAlignDims = (D: number) => [...ENCODER_ALIGN_CHANNELS, ...ENCODER_ALIGN_CHANNELS.map((c) => D / 2 + c)];
const encoderReferenceDim = (D: number) => D - 1;

const ANCHOR = 4;

/**
 * The schedule, by the position whose logits choose the next token (the prompt
 * <|startoftranscript|> <|lang|> <|task|> [<|notimestamps|>] fills positions 0–2 or 0–3).
 */
export const SCHEDULE = {
  /** EOS wins from here on. */
  eosAt: 16,
  /** position → timestamp index (× 0.02 s): <|0.00|> first, a pair at 0.60 s, 1.00 s before EOS. */
  timestampAt: new Map<number, number>([
    [2, 0],
    [8, 30],
    [9, 30],
    [15, 50],
  ]),
};

/** Alignment heads for word timestamps: the cross-attention heads of the last layer, which look at their word's frames. */
export const ALIGNMENT_HEADS: [number, number][] = [[1, 0], [1, 1], [1, 2], [1, 3]];

/**
 * The encoder frame (20 ms) each position's word is heard at, with timestamps: 0–0.60 s holds the
 * words at positions 4–8, 0.60–1.00 s those at 11–15 (the layout of SCHEDULE); timestamps look at
 * their own time. From the last timestamp on, none: that query is zero and its attention uniform,
 * so it is the token that outweighs the others on every frame past the words, and the DTW of word
 * timestamps (weights normalised per frame across tokens, so scale-free) gives those frames to it
 * rather than to the faint side lobes of earlier words.
 */
export function alignFrame(p: number): number | undefined {
  if (p <= 3) return 0;
  if (p <= 8) return 6 * (p - 4) + 3;
  if (p <= 10) return 30;
  if (p <= 15) return 32 + 4 * (p - 11);
  return undefined;
}

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

export function designTinyWhisper(vocab: WhisperVocab, seed: number): WhisperWeights {
  const dims: WhisperDims = { ...TINY_WHISPER_DIMS, vocabSize: vocab.vocabSize };
  const { dModel: D, decoderFfn: F, vocabSize: V, targetPositions: T } = dims;
  const hd = D / dims.decoderHeads;
  const rng = new Rng(seed);
  const enc = encoder(rng, dims);

  // Token embeddings: the anchor (a large zero-mean pair, so LayerNorm scales stay steady), a
  // small random identity in the query dims (the next word depends on the current one), and the
  // <|notimestamps|> flag.
  const embed = zeros(V * D);
  for (let t = 0; t < V; t++) {
    embed[t * D + DIM.anchorPlus] = ANCHOR;
    embed[t * D + DIM.anchorMinus] = -ANCHOR;
    for (let d = DIM.query[0]; d < DIM.query[1]; d++) embed[t * D + d] = rng.normal() * 0.2;
  }
  embed[vocab.noTimestamps * D + DIM.noTimestampsFlag] = 1;

  // Positions: random queries and content (what varies along the transcript) and the schedule.
  const codeOf = new Map([...new Set(SCHEDULE.timestampAt.values())].map((k, i) => [k, i]));
  if (codeOf.size > DIM.timestampCode[1] - DIM.timestampCode[0]) throw new Error('too many scheduled timestamps for their code dims');
  const positions = zeros(T * D);
  for (let q = 0; q < T; q++) {
    const row = q * D;
    for (let d = DIM.query[0]; d < DIM.query[1]; d++) positions[row + d] = rng.normal() * 0.35;
    for (let d = DIM.content[0]; d < DIM.content[1]; d++) positions[row + d] = rng.normal() * (2.5 / Math.sqrt(DIM.content[1] - DIM.content[0]));
    positions[row + DIM.eos] = q >= SCHEDULE.eosAt ? 1 : -1;
    const k = SCHEDULE.timestampAt.get(q);
    positions[row + DIM.timestamp] = k === undefined ? -1 : 1;
    if (k !== undefined) positions[row + DIM.timestampCode[0] + codeOf.get(k)!] = 1;
    positions[row + DIM.word] = 1;
    positions[row + DIM.special] = 1;
    // The code of this position's frame, as the encoder's sinusoid channels hold it.
    const frame = alignFrame(q);
    if (frame !== undefined) ENCODER_ALIGN_CHANNELS.forEach((c, i) => {
      const angle = frame * Math.exp((-Math.log(10000) * c) / (D / 2 - 1));
      positions[row + DIM.align[0] + i] = Math.sin(angle);
      positions[row + DIM.align[0] + ENCODER_ALIGN_CHANNELS.length + i] = Math.cos(angle);
    });
  }

  const layers: DecoderLayer[] = [];
  for (let i = 0; i < dims.decoderLayers; i++) {
    const self = zeroAttention(D);
    if (i === 0) {
      // Head 0 finds <|notimestamps|> (score ≈ 16 against 0) and copies its flag into the mode dim.
      self.q[DIM.anchorPlus * D + 0] = 3.2;
      self.k[DIM.noTimestampsFlag * D + 0] = 3.2;
      self.v[DIM.noTimestampsFlag * D + 0] = 1;
      self.out[0 * D + DIM.mode] = 0.8;
    } else {
      // A little history: queries, keys and values from the query dims, written into the content.
      self.q = rowsOnly(rng, D, DIM.query, 0.8);
      self.k = rowsOnly(rng, D, DIM.query, 0.8);
      self.v = rowsOnly(rng, D, DIM.query, 0.8);
      self.out = columnsOnly(rng, D, DIM.content, 0.15);
    }
    // Cross-attention: queries from the query dims, random keys and values over the encoder
    // states, the context written into the content dims only.
    const cross: Attention = {
      q: rowsOnly(rng, D, DIM.query, 1.34),
      qBias: zeros(D),
      k: rng.normals(D * D, 1.34 / Math.sqrt(D)),
      v: rng.normals(D * D, 1 / Math.sqrt(D)),
      vBias: zeros(D),
      out: columnsOnly(rng, D, DIM.content, 1.6 / Math.sqrt(D)),
      outBias: zeros(D),
    };
    if (i === dims.decoderLayers - 1) {
      alignmentHeads(cross, D, hd);
      // Their values (the audio at the word's frames) add to the content, less than the broad heads'.
      cross.out = columnsOnly(rng, D, DIM.content, 0.8 / Math.sqrt(D));
    }
    const mlp = randomMlp(rng, D, F, 0.01);
    layers.push({ selfNorm: norm(D), self, crossNorm: norm(D), cross, mlpNorm: norm(D), mlp });
  }

  // The output projection reads the designed dims.
  const proj = zeros(D * V);
  const set = (d: number, t: number, v: number) => (proj[d * V + t] = v);
  const contentDims = DIM.content[1] - DIM.content[0];
  const randomContent = (t: number, scale: number) => rng.unit(contentDims).forEach((v, j) => set(DIM.content[0] + j, t, v * scale));
  for (let t = 0; t < vocab.textSize; t++) {
    randomContent(t, 4);
    set(DIM.word, t, isWord(vocab.tokens[t]!) ? 6 : -6);
  }
  set(DIM.eos, vocab.eot, 40);
  for (let id = vocab.eot + 1; id < vocab.timestampBegin; id++) {
    set(DIM.special, id, -40);
    // Languages also read the content: language detection depends on the audio.
    if (id > vocab.sot && id < vocab.translate) randomContent(id, 4);
  }
  for (let k = 0; k < vocab.vocabSize - vocab.timestampBegin; k++) {
    const id = vocab.timestampBegin + k;
    set(DIM.timestamp, id, 40);
    set(DIM.mode, id, -100);
    const code = codeOf.get(k);
    if (code !== undefined) set(DIM.timestampCode[0] + code, id, 25);
  }

  return { dims, ...enc, embedTokens: embed, decoderPositions: positions, decoderLayers: layers, decoderNorm: norm(D), projOut: proj };
}
