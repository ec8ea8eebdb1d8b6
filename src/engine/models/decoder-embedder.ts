import type { Backend, InferenceSession, Tensor } from '../../backends/types.js';
import type { CatalogEntry } from '../protocol.js';
import type { Embedder } from './encoder.js';
import { createModelSession, joinPath, readJson } from './files.js';
import { emptyKv, readDecoderInterface, toFloat32, type DecoderConfig, type DecoderInterface } from './interface.js';
import { poolRows, readPooling, type Pooling } from './pooling.js';

/**
 * A decoder embedder (gte-Qwen2, Qwen3-Embedding): the decoder graph exported for feature
 * extraction (`last_hidden_state` out, empty `past_key_values` in), one forward pass over the
 * padded batch, then the last token's state (their 1_Pooling/config.json's lasttoken mode),
 * L2-normalised. Sequences are padded on the left, as these models' tokenizers do, so every
 * row's last token is the batch's last position.
 */
export class DecoderEmbedder implements Embedder {
  private constructor(
    private readonly backend: Backend,
    private readonly session: InferenceSession,
    private readonly io: DecoderInterface,
    private readonly pooling: Pooling,
    private readonly padId: bigint,
  ) {}

  /**
   * `padId` fills the padding as transformers.js's tokenizer does: masked out, but a q8
   * export's per-tensor activation scale still sees those rows.
   */
  static async load(backend: Backend, folder: string, entry: CatalogEntry, padId = 0): Promise<DecoderEmbedder> {
    const config = await readJson<DecoderConfig>(backend, joinPath(folder, 'config.json'));
    if (!config) throw new Error(`${entry.id}: config.json is missing in ${folder}`);
    const pooling = await readPooling(backend, folder, 'last_token');
    const session = await createModelSession(backend, folder, entry);
    try {
      return new DecoderEmbedder(backend, session, readDecoderInterface(session, config, 'last_hidden_state'), pooling, BigInt(padId));
    } catch (e) {
      await session.release();
      throw e;
    }
  }

  async embed(batch: number[][]): Promise<Float32Array[]> {
    const { Tensor } = this.backend;
    const io = this.io;
    const n = batch.length;
    const width = Math.max(...batch.map((ids) => ids.length));
    const ids = new BigInt64Array(n * width).fill(this.padId);
    const mask = new BigInt64Array(n * width);
    // Padding positions get 1, as transformers.js's create_position_ids fills them; they are masked out.
    const positions = new BigInt64Array(n * width).fill(1n);
    batch.forEach((seq, b) => {
      const pad = width - seq.length;
      seq.forEach((id, i) => {
        ids[b * width + pad + i] = BigInt(id);
        mask[b * width + pad + i] = 1n;
        positions[b * width + pad + i] = BigInt(i + io.positionStart);
      });
    });
    const feeds: Record<string, Tensor> = {
      input_ids: new Tensor('int64', ids, [n, width]),
      attention_mask: new Tensor('int64', mask, [n, width]),
    };
    if (io.positionIds) feeds.position_ids = new Tensor('int64', positions, [n, width]);
    if (io.numLogitsToKeep) feeds.num_logits_to_keep = new Tensor('int64', BigInt64Array.of(0n), []); // 0 keeps every position
    if (io.useCacheBranch) feeds.use_cache_branch = new Tensor('bool', Uint8Array.of(0), [1]);
    const empty = new Tensor(io.kvType, emptyKv(io.kvType), [n, io.kvHeads, 0, io.headDim]);
    for (let i = 0; i < io.layers; i++) {
      feeds[`past_key_values.${i}.key`] = empty;
      feeds[`past_key_values.${i}.value`] = empty;
    }
    const hidden = (await this.session.run(feeds)).last_hidden_state;
    const data = toFloat32(hidden, 0, hidden.dims.reduce((a, b) => a * b, 1));
    return poolRows(data, width, hidden.dims[2], batch.map((seq) => ({ from: width - seq.length, length: seq.length })), this.pooling);
  }

  async dispose(): Promise<void> {
    await this.session.release();
  }
}
