// A BERT-style encoder's weights (row-major [in, out] matrices) and its config.
export interface BertConfig {
  vocabSize: number;
  hidden: number;
  layers: number;
  heads: number;
  intermediate: number;
  maxPositions: number;
  typeVocab: number;
  outputDim: number;
  eps: number;
}

export interface BertLayer {
  q: Float32Array; qb: Float32Array;
  k: Float32Array; kb: Float32Array;
  v: Float32Array; vb: Float32Array;
  o: Float32Array; ob: Float32Array;
  ln1w: Float32Array; ln1b: Float32Array;
  ff1: Float32Array; ff1b: Float32Array;
  ff2: Float32Array; ff2b: Float32Array;
  ln2w: Float32Array; ln2b: Float32Array;
}

/** The encoder alone: embeddings and layers (what a classification head or a projection sits on). */
export interface BertEncoderWeights {
  config: BertConfig;
  word: Float32Array; // [V, h]
  position: Float32Array; // [P, h]
  tokenType: Float32Array; // [T, h]
  embLnW: Float32Array;
  embLnB: Float32Array;
  layers: BertLayer[];
}

export interface BertWeights extends BertEncoderWeights {
  proj: Float32Array; // [h, out]
  projB: Float32Array; // [out]
}
