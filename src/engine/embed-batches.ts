// An embeddings request runs in micro-batches: a padded batch's activations grow with
// rows × width (and attention's with rows × width²), and onnxruntime keeps what a run took
// for the runs after it. One request of 2,048 short inputs run as one batch took a server
// about 1 GiB above idle (issue 31); in micro-batches, about 80 MiB (npm run bench:memory).
import type { Embedder } from './models/encoder.js';

/** How much one embedding run takes at most: rows, and rows × the longest row's tokens. */
export interface EmbedBatchLimits {
  rows: number;
  tokens: number;
}

/** 32 rows is sentence-transformers' default batch size; 8,192 padded tokens is 16 rows of 512. */
export const EMBED_BATCH: EmbedBatchLimits = { rows: 32, tokens: 8192 };

/**
 * The indices of `lengths` grouped into runs within `limits`, longest first so that rows of
 * like length share a run and little of it is padding. A row longer than `limits.tokens`
 * runs alone.
 */
export function microBatches(lengths: number[], limits: EmbedBatchLimits = EMBED_BATCH): number[][] {
  const order = lengths.map((_, i) => i).sort((a, b) => lengths[b]! - lengths[a]! || a - b);
  const batches: number[][] = [];
  let batch: number[] = [];
  let width = 0; // the batch's first row is its longest
  for (const i of order) {
    if (batch.length > 0 && (batch.length === limits.rows || (batch.length + 1) * width > limits.tokens)) {
      batches.push(batch);
      batch = [];
    }
    if (batch.length === 0) width = lengths[i]!;
    batch.push(i);
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}

/** One run at a time, in the order asked: concurrent requests' batches take turns, so a
 * model's runs never hold more than one batch's activations at once. */
class Turns {
  #last: Promise<unknown> = Promise.resolve();

  run<T>(fn: () => Promise<T>): Promise<T> {
    const mine = this.#last.then(fn, fn);
    this.#last = mine.catch(() => undefined);
    return mine;
  }
}

const turns = new WeakMap<object, Turns>();

/** Runs `fn` when `model`'s runs before it are done (embedders' and cross-encoders' alike). */
export function inTurn<T>(model: object, fn: () => Promise<T>): Promise<T> {
  let queue = turns.get(model);
  if (!queue) turns.set(model, (queue = new Turns()));
  return queue.run(fn);
}

/**
 * One vector per sequence of `ids`, in their order, computed in micro-batches. The vectors are
 * views of one buffer: one allocation rather than one per input (thousands of small ones stay
 * in malloc's arenas after they are freed), and one copy when it is posted to another thread.
 */
export async function embedInBatches(encoder: Embedder, ids: number[][], limits: EmbedBatchLimits = EMBED_BATCH): Promise<Float32Array[]> {
  let all: Float32Array | undefined;
  const out = new Array<Float32Array>(ids.length);
  for (const batch of microBatches(ids.map((s) => s.length), limits)) {
    const vectors = await inTurn(encoder, () => encoder.embed(batch.map((i) => ids[i]!)));
    const dim = vectors[0]!.length;
    all ??= new Float32Array(ids.length * dim);
    batch.forEach((i, k) => {
      out[i] = all!.subarray(i * dim, (i + 1) * dim);
      out[i].set(vectors[k]!);
    });
  }
  return out;
}
