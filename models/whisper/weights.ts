// Whisper's weights in memory, as HF's WhisperForConditionalGeneration holds them. Matrices are
// row-major [in, out] (y = x · W), as the graphs write them; convolutions [out, in, kernel].

export interface WhisperDims {
  dModel: number;
  encoderLayers: number;
  encoderHeads: number;
  encoderFfn: number;
  decoderLayers: number;
  decoderHeads: number;
  decoderFfn: number;
  melBins: number;
  /** Encoder frames after the stride-2 conv: 1500 for 30 s. */
  sourcePositions: number;
  targetPositions: number;
  vocabSize: number;
}

export interface Norm {
  weight: Float32Array;
  bias: Float32Array;
}

/** q/v/out projections have biases, k has none (as Whisper's). */
export interface Attention {
  q: Float32Array;
  qBias: Float32Array;
  k: Float32Array;
  v: Float32Array;
  vBias: Float32Array;
  out: Float32Array;
  outBias: Float32Array;
}

export interface Mlp {
  fc1: Float32Array; // [D, F]
  fc1Bias: Float32Array;
  fc2: Float32Array; // [F, D]
  fc2Bias: Float32Array;
}

export interface EncoderLayer {
  selfNorm: Norm;
  self: Attention;
  mlpNorm: Norm;
  mlp: Mlp;
}

export interface DecoderLayer extends EncoderLayer {
  crossNorm: Norm;
  cross: Attention;
}

export interface WhisperWeights {
  dims: WhisperDims;
  conv1: Float32Array; // [D, mel, 3]
  conv1Bias: Float32Array;
  conv2: Float32Array; // [D, D, 3]
  conv2Bias: Float32Array;
  encoderPositions: Float32Array; // [1500, D]
  encoderLayers: EncoderLayer[];
  encoderNorm: Norm;
  embedTokens: Float32Array; // [V, D]
  decoderPositions: Float32Array; // [448, D]
  decoderLayers: DecoderLayer[];
  decoderNorm: Norm;
  /** proj_out as [D, V]. */
  projOut: Float32Array;
}

/** Whisper's encoder positions: sinusoids(length, channels), [sin | cos] halves. */
export function sinusoids(length: number, channels: number): Float32Array {
  const half = channels / 2;
  const step = Math.log(10000) / (half - 1);
  const out = new Float32Array(length * channels);
  for (let t = 0; t < length; t++) {
    for (let i = 0; i < half; i++) {
      const a = t * Math.exp(-step * i);
      out[t * channels + i] = Math.sin(a);
      out[t * channels + half + i] = Math.cos(a);
    }
  }
  return out;
}

/** Every weight, the encoder's fixed positions included (as HF's num_parameters counts them). */
export function parameterCount(w: WhisperWeights): number {
  let n = 0;
  const add = (v: unknown): void => {
    if (v instanceof Float32Array) n += v.length;
    else if (Array.isArray(v)) v.forEach(add);
    else if (v && typeof v === 'object') Object.values(v).forEach(add);
  };
  const { dims: _dims, ...weights } = w;
  add(weights);
  return n;
}
