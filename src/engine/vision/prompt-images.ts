import type { EmbedSplice } from '../models/token-embedder.js';
import type { KvArray } from '../models/interface.js';

/**
 * A sequence's images while its prompt prefills: the vision encoder's inputs until they are
 * encoded (once, at the first chunk that needs them), then the features, handed out chunk by
 * chunk as rows over the image tokens' embeddings. Both are let go once the prompt is in the
 * cache (release()), so an image costs memory only while its prompt prefills.
 */
export class PromptImages {
  private features: KvArray | null = null;

  constructor(
    /** The prompt positions of the image tokens, ascending: the k-th takes the k-th feature row. */
    readonly positions: readonly number[],
    /** Runs the vision encoder on the prompt's images (it holds their pixels until released). */
    private encode: (() => Promise<KvArray>) | null,
  ) {}

  /** The feature rows over the image tokens of prompt positions [start, end), at positions relative to `start`. */
  async splices(start: number, end: number): Promise<EmbedSplice[]> {
    let k = lowerBound(this.positions, start);
    if (k === this.positions.length || this.positions[k]! >= end) return [];
    const features = await this.encoded();
    const hidden = features.length / this.positions.length;
    const out: EmbedSplice[] = [];
    while (k < this.positions.length && this.positions[k]! < end) {
      // A run of consecutive image tokens is one splice.
      let n = 1;
      while (k + n < this.positions.length && this.positions[k + n] === this.positions[k]! + n && this.positions[k + n]! < end) n++;
      out.push({ at: this.positions[k]! - start, data: features.subarray(k * hidden, (k + n) * hidden) });
      k += n;
    }
    return out;
  }

  /** Lets the pixels and features go (the prompt is prefilled, or the request ended). */
  release(): void {
    this.encode = null;
    this.features = null;
  }

  private async encoded(): Promise<KvArray> {
    if (this.features) return this.features;
    if (!this.encode) throw new Error("a prompt's images were used after they were released");
    const features = await this.encode();
    if (features.length % this.positions.length !== 0) {
      throw new Error(`the vision encoder gave ${features.length} values for ${this.positions.length} image tokens`);
    }
    this.encode = null;
    return (this.features = features);
  }
}

function lowerBound(list: readonly number[], x: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The prompt as the prefix cache keys it: each image token stands for its image, so the same
 * image (its pixels' hash) and text give the same key, and another image another. The k-th
 * token of an image with hash h is −1 − (h·2²⁰ + k): below every real id, and exact in a double.
 */
export function imageCacheKey(ids: readonly number[], positions: readonly number[], images: readonly { tokens: number; hash: number }[]): number[] {
  const key = [...ids];
  let k = 0;
  for (const { tokens, hash } of images) {
    for (let t = 0; t < tokens; t++, k++) key[positions[k]!] = -1 - (hash * 2 ** 20 + t);
  }
  return key;
}

/** FNV-1a over an image's size and pixels: the prefix cache's name for it. */
export function pixelHash(width: number, height: number, data: Uint8Array | Uint8ClampedArray): number {
  let h = 0x811c9dc5;
  const mix = (b: number) => {
    h ^= b;
    h = Math.imul(h, 0x01000193);
  };
  for (const v of [width, height]) for (let s = 0; s < 32; s += 8) mix((v >>> s) & 0xff);
  for (let i = 0; i < data.length; i++) mix(data[i]!);
  return h >>> 0;
}
