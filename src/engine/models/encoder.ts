import type { Backend, InferenceSession, Tensor } from '../../backends/types.js';
import type { CatalogEntry } from '../protocol.js';
import { createModelSession } from './files.js';
import { toFloat32 } from './interface.js';

/**
 * A BERT-style encoder (input_ids, attention_mask, token_type_ids → last_hidden_state)
 * turned into sentence vectors: mean over the real tokens, then L2-normalised,
 * as transformers.js's feature-extraction pipeline does with pooling "mean".
 */
export class Encoder {
  private constructor(
    private readonly backend: Backend,
    private readonly session: InferenceSession,
  ) {}

  static async load(backend: Backend, folder: string, entry: CatalogEntry): Promise<Encoder> {
    return new Encoder(backend, await createModelSession(backend, folder, entry));
  }

  async embed(batch: number[][]): Promise<Float32Array[]> {
    const { Tensor } = this.backend;
    const n = batch.length;
    const width = Math.max(...batch.map((ids) => ids.length));
    const ids = new BigInt64Array(n * width);
    const mask = new BigInt64Array(n * width);
    batch.forEach((seq, b) =>
      seq.forEach((id, i) => {
        ids[b * width + i] = BigInt(id);
        mask[b * width + i] = 1n;
      }),
    );
    const feeds: Record<string, Tensor> = {
      input_ids: new Tensor('int64', ids, [n, width]),
      attention_mask: new Tensor('int64', mask, [n, width]),
    };
    if (this.session.inputNames.includes('token_type_ids')) {
      feeds.token_type_ids = new Tensor('int64', new BigInt64Array(n * width), [n, width]);
    }
    const out = await this.session.run(feeds);
    const hidden = out.last_hidden_state ?? out[this.session.outputNames[0]];
    const dim = hidden.dims[2];
    const data = toFloat32(hidden, 0, hidden.dims.reduce((a, b) => a * b, 1));
    return batch.map((seq, b) => {
      const v = new Float32Array(dim);
      for (let i = 0; i < seq.length; i++) {
        const row = (b * width + i) * dim;
        for (let d = 0; d < dim; d++) v[d] += data[row + d];
      }
      return normalize(v);
    });
  }

  async dispose(): Promise<void> {
    await this.session.release();
  }
}

export function normalize(v: Float32Array): Float32Array {
  let norm = 0;
  for (const x of v) norm += x * x;
  norm = Math.sqrt(norm) || 1;
  for (let i = 0; i < v.length; i++) v[i] /= norm;
  return v;
}
