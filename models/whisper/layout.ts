// The residual layout of tiny-whisper's designed decoder (d_model 64), and the encoder channels
// its alignment heads read.

/** Residual dimensions of the decoder design. */
export const DIM = {
  /** +ANCHOR / −ANCHOR in every token embedding: a large zero-mean pair, so LayerNorm's scale is steady and other dims can be read relative to it. */
  anchorPlus: 0,
  anchorMinus: 1,
  noTimestampsFlag: 2,
  /** Set by layer 0 when the prompt has <|notimestamps|>: sinks every timestamp logit. */
  mode: 3,
  /** Random per position and per token: what the broad cross-attention heads ask for. */
  query: [4, 12] as const,
  eos: 12,
  timestamp: 13,
  word: 14,
  special: 15,
  /** One-hot: which scheduled timestamp token wins. */
  timestampCode: [16, 20] as const,
  /** In <|startoftranscript|>'s embedding only. */
  sotFlag: 20,
  /** 1 from <|startoftranscript|> on (layer 0 finds it). */
  afterSot: 21,
  /** 1 / (tokens since <|startoftranscript|> + 1) (layer 1 counts them). */
  count: 22,
  /** Never written: a flag read as (flag − zero) and the anchor as (plus − minus)/2 are free of LayerNorm's mean. */
  zero: 23,
  content: [24, 52] as const,
  /** The frame a word's cross-attention looks at, as the encoder's position channels code it. */
  align: [52, 64] as const,
};

export const ANCHOR = 4;

/**
 * Encoder channels that carry only their position (conv2 and the layers write nothing there):
 * the sin and cos halves of Whisper's sinusoid channels 4, 6, …, 14 (periods 21 to 405 frames),
 * and a reference channel set to zero in the position table, which the alignment keys subtract so
 * that the final LayerNorm's mean cancels out.
 */
export const ENCODER_ALIGN_CHANNELS = [4, 6, 8, 10, 12, 14];
export const encoderAlignDims = (D: number) => [...ENCODER_ALIGN_CHANNELS, ...ENCODER_ALIGN_CHANNELS.map((c) => D / 2 + c)];
export const encoderReferenceDim = (D: number) => D - 1;

/** The align code of encoder frame `frame`: its position channels' values. */
export function alignCode(frame: number, D: number): number[] {
  const angles = ENCODER_ALIGN_CHANNELS.map((c) => frame * Math.exp((-Math.log(10000) * c) / (D / 2 - 1)));
  return [...angles.map(Math.sin), ...angles.map(Math.cos)];
}

/**
 * Adds to column `col` of W [D, D] (or of fc1 [D, F] with stride F) a read of `dim` against the
 * zero dim: after LayerNorm, (x_dim − μ)/σ − (0 − μ)/σ = x_dim/σ, free of the mean μ.
 */
export function readFlag(w: Float32Array, stride: number, col: number, dim: number, weight: number): void {
  w[dim * stride + col] = (w[dim * stride + col] ?? 0) + weight;
  w[DIM.zero * stride + col] = (w[DIM.zero * stride + col] ?? 0) - weight;
}

/** Adds a read of the anchor, (plus − minus)/2 = ANCHOR/σ after LayerNorm, to column `col`. */
export function readAnchor(w: Float32Array, stride: number, col: number, weight: number): void {
  w[DIM.anchorPlus * stride + col] = (w[DIM.anchorPlus * stride + col] ?? 0) + weight / 2;
  w[DIM.anchorMinus * stride + col] = (w[DIM.anchorMinus * stride + col] ?? 0) - weight / 2;
}
