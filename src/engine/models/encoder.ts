import type { Backend, InferenceSession, Tensor } from '../../backends/types.js';
import type { CatalogEntry } from '../protocol.js';
import { createModelSession } from './files.js';
import { toFloat32 } from './interface.js';
import { poolRows, readPooling, type Pooling } from './pooling.js';

/** What the engine's embedding path calls: token ids in, one unit vector per input out. */
export interface Embedder {
  embed(batch: number[][]): Promise<Float32Array[]>;
  dispose(): Promise<void>;
}

/**
 * A BERT-style encoder (input_ids, attention_mask, token_type_ids → last_hidden_state)
 * turned into sentence vectors: pooled over the real tokens (mean unless the checkpoint's
 * 1_Pooling/config.json says otherwise), then L2-normalised, as transformers.js's
 * feature-extraction pipeline does.
 */
export class Encoder implements Embedder {
  private constructor(
    private readonly backend: Backend,
    private readonly session: InferenceSession,
    private readonly pooling: Pooling,
  ) {}

  static async load(backend: Backend, folder: string, entry: CatalogEntry): Promise<Encoder> {
    const pooling = await readPooling(backend, folder, 'mean');
    return new Encoder(backend, await createModelSession(backend, folder, entry), pooling);
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
    const data = toFloat32(hidden, 0, hidden.dims.reduce((a, b) => a * b, 1));
    return poolRows(data, width, hidden.dims[2], batch.map((seq) => ({ from: 0, length: seq.length })), this.pooling);
  }

  async dispose(): Promise<void> {
    await this.session.release();
  }
}
