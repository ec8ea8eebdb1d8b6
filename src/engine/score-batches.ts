// A rerank of hundreds of documents runs as embeddings do (embed-batches.ts): in micro-batches
// of like-length pairs, one run of a model at a time, so that its memory is one bounded batch's
// activations, never one padded batch of every pair.
import { EMBED_BATCH, inTurn, microBatches, type EmbedBatchLimits } from './embed-batches.js';
import type { PairEncoding } from './text/pairs.js';

/** What scoring calls: encoded pairs in, one score per pair out (models/cross-encoder.ts). */
export interface Scorer {
  score(batch: PairEncoding[]): Promise<Float32Array>;
}

/** One score per pair of `pairs`, in their order, computed in micro-batches within `limits`. */
export async function scoreInBatches(scorer: Scorer, pairs: PairEncoding[], limits: EmbedBatchLimits = EMBED_BATCH): Promise<Float32Array> {
  const out = new Float32Array(pairs.length);
  for (const batch of microBatches(pairs.map((p) => p.ids.length), limits)) {
    const scores = await inTurn(scorer, () => scorer.score(batch.map((i) => pairs[i]!)));
    batch.forEach((i, k) => (out[i] = scores[k]!));
  }
  return out;
}
