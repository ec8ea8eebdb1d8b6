import type { Backend, InferenceSession, Tensor } from '../../backends/types.js';
import type { BatchKv, KvShape, SeqKv } from '../kv/layout.js';
import type { CatalogEntry } from '../protocol.js';
import { joinPath, onnxFileFor, readJson } from './files.js';

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

  get kvShape(): KvShape {
    return { layers: this.layers, kvHeads: this.kvHeads, headDim: this.headDim };
  }

  /** Runs one sequence's `tokens` after its cached ones: the logits of the last position and the extended cache. */
  async prefill(tokens: number[], past: SeqKv | null): Promise<{ logits: Float32Array; kv: SeqKv }> {
    const pastLen = past?.length ?? 0;
    const out = await this.run(
      [tokens],
      [Array.from(tokens, (_, i) => pastLen + i)],
      new BigInt64Array(pastLen + tokens.length).fill(1n),
      pastLen,
      past?.data ?? null,
    );
    const vocab = out.logits.dims[2];
    const logits = (out.logits.data as Float32Array).slice((tokens.length - 1) * vocab, tokens.length * vocab);
    return { logits, kv: { length: pastLen + tokens.length, data: out.kv } };
  }

  /** One decode step for a left-padded batch: row r takes `tokens[r]` and returns its next-token logits. */
  async decode(tokens: number[], batch: BatchKv): Promise<{ logits: Float32Array[]; kv: BatchKv }> {
    const { width, pads } = batch;
    const mask = new BigInt64Array(tokens.length * (width + 1));
    pads.forEach((pad, r) => mask.fill(1n, r * (width + 1) + pad, (r + 1) * (width + 1)));
    const out = await this.run(
      tokens.map((t) => [t]),
      pads.map((pad) => [width - pad]),
      mask,
      width,
      batch.data,
    );
    const vocab = out.logits.dims[2];
    const data = out.logits.data as Float32Array;
    const logits = tokens.map((_, r) => data.subarray(r * vocab, (r + 1) * vocab));
    return { logits, kv: { width: width + 1, pads, data: out.kv } };
  }

  private async run(
    ids: number[][],
    positions: number[][],
    mask: BigInt64Array,
    pastLen: number,
    past: Float32Array[] | null,
  ): Promise<{ logits: Tensor; kv: Float32Array[] }> {
    const { Tensor } = this.backend;
    const rows = ids.length;
    const len = ids[0].length;
    const feeds: Record<string, Tensor> = {
      input_ids: new Tensor('int64', BigInt64Array.from(ids.flat(), BigInt), [rows, len]),
      attention_mask: new Tensor('int64', mask, [rows, pastLen + len]),
      position_ids: new Tensor('int64', BigInt64Array.from(positions.flat(), BigInt), [rows, len]),
    };
    const kvDims = [rows, this.kvHeads, pastLen, this.headDim];
    for (let i = 0; i < this.layers; i++) {
      feeds[`past_key_values.${i}.key`] = new Tensor('float32', past?.[2 * i] ?? new Float32Array(0), kvDims);
      feeds[`past_key_values.${i}.value`] = new Tensor('float32', past?.[2 * i + 1] ?? new Float32Array(0), kvDims);
    }
    const out = await this.session.run(feeds);
    const kv: Float32Array[] = [];
    for (let i = 0; i < this.layers; i++) {
      kv.push(out[`present.${i}.key`].data as Float32Array, out[`present.${i}.value`].data as Float32Array);
    }
    return { logits: out.logits, kv };
  }

  async dispose(): Promise<void> {
    await this.session.release();
  }
}
