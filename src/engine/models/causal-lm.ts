import type { Backend, InferenceSession, Tensor } from '../../backends/types.js';
import type { CatalogEntry } from '../protocol.js';
import { joinPath, onnxFileFor, readJson } from './files.js';

/** A sequence's attention keys and values, one tensor pair per layer. */
export interface KvCache {
  readonly length: number;
  readonly tensors: Record<string, Tensor>;
}

interface LlmConfig {
  num_hidden_layers: number;
  num_attention_heads: number;
  num_key_value_heads?: number;
  hidden_size: number;
  head_dim?: number;
  vocab_size: number;
  eos_token_id?: number | number[];
}

/**
 * A decoder-only model exported the way transformers.js expects (input_ids,
 * attention_mask, position_ids, past_key_values.N.key|value → logits, present.N.*).
 * It only runs the graph; sequences, sampling and scheduling live elsewhere.
 */
export class CausalLM {
  private constructor(
    private readonly backend: Backend,
    private readonly session: InferenceSession,
    readonly layers: number,
    readonly kvHeads: number,
    readonly headDim: number,
    readonly vocabSize: number,
    readonly eosIds: number[],
  ) {}

  static async load(backend: Backend, folder: string, entry: CatalogEntry): Promise<CausalLM> {
    const config = await readJson<LlmConfig>(backend, joinPath(folder, 'config.json'));
    if (!config) throw new Error(`${entry.id}: config.json is missing in ${folder}`);
    const gen = await readJson<{ eos_token_id?: number | number[] }>(backend, joinPath(folder, 'generation_config.json'));
    const eos = gen?.eos_token_id ?? config.eos_token_id ?? [];
    const session = await backend.createSession(joinPath(folder, onnxFileFor(entry, backend.device)));
    return new CausalLM(
      backend,
      session,
      config.num_hidden_layers,
      config.num_key_value_heads ?? config.num_attention_heads,
      config.head_dim ?? config.hidden_size / config.num_attention_heads,
      config.vocab_size,
      Array.isArray(eos) ? eos : [eos],
    );
  }

  /**
   * Runs `tokens` after the cached ones. Returns the logits of the last position
   * and the cache extended by these tokens.
   */
  async forward(tokens: number[], past: KvCache | null): Promise<{ logits: Float32Array; kv: KvCache }> {
    const { Tensor } = this.backend;
    const pastLen = past?.length ?? 0;
    const total = pastLen + tokens.length;
    const feeds: Record<string, Tensor> = {
      input_ids: new Tensor('int64', BigInt64Array.from(tokens, BigInt), [1, tokens.length]),
      attention_mask: new Tensor('int64', new BigInt64Array(total).fill(1n), [1, total]),
      position_ids: new Tensor('int64', BigInt64Array.from(tokens, (_, i) => BigInt(pastLen + i)), [1, tokens.length]),
    };
    for (let i = 0; i < this.layers; i++) {
      for (const kind of ['key', 'value']) {
        feeds[`past_key_values.${i}.${kind}`] =
          past?.tensors[`${i}.${kind}`] ??
          new Tensor('float32', new Float32Array(0), [1, this.kvHeads, 0, this.headDim]);
      }
    }
    const out = await this.session.run(feeds);
    const logits = out.logits;
    const vocab = logits.dims[2];
    const data = logits.data as Float32Array;
    const last = data.slice((tokens.length - 1) * vocab, tokens.length * vocab);
    const tensors: Record<string, Tensor> = {};
    for (let i = 0; i < this.layers; i++) {
      tensors[`${i}.key`] = out[`present.${i}.key`];
      tensors[`${i}.value`] = out[`present.${i}.value`];
    }
    return { logits: last, kv: { length: total, tensors } };
  }

  async dispose(): Promise<void> {
    await this.session.release();
  }
}
