import type { Backend, InferenceSession, Tensor } from '../../backends/types.js';
import type { CatalogEntry } from '../protocol.js';
import type { PairEncoding } from '../text/pairs.js';
import { isCrossEncoderConfig, labelCount, readActivation, type ClassifierConfig } from './classifier-head.js';
import { createModelSession, joinPath, readJson, type FileReader } from './files.js';
import { toFloat32 } from './interface.js';

const FEEDS = ['input_ids', 'attention_mask', 'token_type_ids'];

/**
 * A cross-encoder export (input_ids, attention_mask and, for BERT, token_type_ids → logits
 * [batch, 1]): one score per pair, the activation applied. Batches are padded on the right
 * with the tokenizer's pad id, as transformers.js pads them.
 */
export class CrossEncoder {
  private constructor(
    private readonly backend: Backend,
    private readonly session: InferenceSession,
    private readonly activation: (x: number) => number,
    private readonly padId: number,
  ) {}

  static async load(backend: Backend & FileReader, folder: string, entry: CatalogEntry, padId: number): Promise<CrossEncoder> {
    const config = (await readJson<ClassifierConfig>(backend, joinPath(folder, 'config.json'))) ?? {};
    if (!isCrossEncoderConfig(config)) {
      throw new Error(`${entry.id}: task rerank needs a *ForSequenceClassification head with one label; config.json has ${config.architectures?.[0] ?? 'no architecture'} with ${labelCount(config)} labels`);
    }
    const activation = readActivation(config).fn;
    const session = await createModelSession(backend, folder, entry);
    const unknown = session.inputNames.filter((n) => !FEEDS.includes(n));
    const problems = [
      ...['input_ids', 'attention_mask'].filter((n) => !session.inputNames.includes(n)).map((n) => `no input "${n}"`),
      ...unknown.map((n) => `an input Hearth does not know how to feed: "${n}"`),
      ...(session.outputNames.includes('logits') ? [] : ['no output "logits"']),
    ];
    if (problems.length) {
      await session.release();
      throw new Error(`${entry.id}: the ONNX graph is not a cross-encoder Hearth can feed: ${problems.join('; ')} (inputs: ${session.inputNames.join(', ')})`);
    }
    return new CrossEncoder(backend, session, activation, padId);
  }

  /** One score per pair of `batch`, in its order. */
  async score(batch: PairEncoding[]): Promise<Float32Array> {
    const { Tensor } = this.backend;
    const n = batch.length;
    const width = Math.max(...batch.map((p) => p.ids.length));
    const ids = new BigInt64Array(n * width).fill(BigInt(this.padId));
    const mask = new BigInt64Array(n * width);
    const types = new BigInt64Array(n * width);
    batch.forEach((p, b) =>
      p.ids.forEach((id, i) => {
        ids[b * width + i] = BigInt(id);
        mask[b * width + i] = 1n;
        types[b * width + i] = BigInt(p.types[i] ?? 0);
      }),
    );
    const feeds: Record<string, Tensor> = {
      input_ids: new Tensor('int64', ids, [n, width]),
      attention_mask: new Tensor('int64', mask, [n, width]),
    };
    if (this.session.inputNames.includes('token_type_ids')) feeds.token_type_ids = new Tensor('int64', types, [n, width]);
    const logits = (await this.session.run(feeds)).logits!;
    // [batch, 1]: one logit per row.
    const perRow = logits.dims.length > 1 ? logits.dims[1]! : 1;
    const data = toFloat32(logits, 0, n * perRow);
    return Float32Array.from({ length: n }, (_, b) => this.activation(data[b * perRow]!));
  }

  async dispose(): Promise<void> {
    await this.session.release();
  }
}
