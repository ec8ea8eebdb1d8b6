// Whisper's two ONNX graphs as onnx-community exports them (the transformers.js layout):
// onnx/encoder_model{suffix}.onnx (input_features → last_hidden_state) and
// onnx/decoder_model_merged{suffix}.onnx (input_ids, encoder_hidden_states, past_key_values.N.
// decoder|encoder.key|value, use_cache_branch → logits, present.*, and cross_attentions.N where
// the export has them). What is fed is read from the sessions, never assumed.
import type { Backend, InferenceSession, Tensor } from '../../backends/types.js';
import { createModelSession, WHISPER_GRAPHS } from '../models/files.js';
import type { CatalogEntry } from '../protocol.js';

type Float = Float32Array;

/** One decoder step's outputs for the rows fed: logits per position, and the cross-attentions where asked. */
export interface DecoderStep {
  /** [rows, positions, vocab] as one array. */
  logits: Float;
  positions: number;
  vocab: number;
  /** Per layer: [rows, heads, positions, frames]. */
  crossAttentions?: Float[];
  heads?: number;
  frames?: number;
}

/** A batch's decoder cache: the self-attention KV grows a step at a time; the encoder's is computed once. */
export interface DecoderCache {
  /** Past name → tensor (past_key_values.N.decoder.key, …, and the .encoder. ones). */
  past: Map<string, Tensor>;
  rows: number;
}

export class WhisperGraphs {
  private constructor(
    private readonly backend: Backend,
    private readonly encoder: InferenceSession,
    private readonly decoder: InferenceSession,
    /** past input name → the present output that feeds it next step. */
    private readonly presentOf: Map<string, string>,
    /** [heads, head_dim] of each past input, from its metadata (or the config where symbolic). */
    private readonly pastDims: Map<string, [number, number]>,
    readonly crossAttentionOutputs: string[],
    private readonly logitsName: string,
  ) {}

  static async load(backend: Backend, folder: string, entry: CatalogEntry, config: { decoder_attention_heads?: number; d_model?: number }): Promise<WhisperGraphs> {
    const encoder = await createModelSession(backend, folder, entry, undefined, undefined, WHISPER_GRAPHS.encoder);
    let decoder: InferenceSession;
    try {
      decoder = await createModelSession(backend, folder, entry, undefined, undefined, WHISPER_GRAPHS.decoder);
    } catch (e) {
      await encoder.release();
      throw e;
    }
    const problems: string[] = [];
    if (!encoder.inputNames.includes('input_features')) problems.push(`the encoder takes ${encoder.inputNames.join(', ')}, not input_features`);
    for (const name of ['input_ids', 'encoder_hidden_states']) if (!decoder.inputNames.includes(name)) problems.push(`the decoder has no ${name} input`);
    const presentOf = new Map<string, string>();
    const pastDims = new Map<string, [number, number]>();
    const heads = config.decoder_attention_heads ?? 1;
    const headDim = (config.d_model ?? heads) / heads;
    for (const name of decoder.inputNames) {
      const m = /^past_key_values\.(\d+)\.(decoder|encoder)\.(key|value)$/.exec(name);
      if (!m) continue;
      const present = `present.${m[1]}.${m[2]}.${m[3]}`;
      if (!decoder.outputNames.includes(present)) problems.push(`the decoder takes ${name} and gives no ${present}`);
      presentOf.set(name, present);
      const shape = metadataShape(decoder, name);
      pastDims.set(name, [typeof shape?.[1] === 'number' ? shape[1] : heads, typeof shape?.[3] === 'number' ? shape[3] : headDim]);
    }
    if (presentOf.size === 0) problems.push('the decoder takes no past_key_values (an export without a cache is not served)');
    const logitsName = decoder.outputNames.includes('logits') ? 'logits' : decoder.outputNames[0]!;
    if (problems.length) {
      await encoder.release();
      await decoder.release();
      throw new Error(`${entry.id}: not a Whisper export Hearth can feed: ${problems.join('; ')}`);
    }
    const cross = decoder.outputNames.filter((n) => /^cross_attentions\.\d+$/.test(n)).sort((a, b) => layerOf(a) - layerOf(b));
    return new WhisperGraphs(backend, encoder, decoder, presentOf, pastDims, cross, logitsName);
  }

  /** Encoder states of a batch of windows' features ([rows, mels, frames]), as the decoder's input. */
  async encode(features: Float, dims: number[]): Promise<Tensor> {
    const out = await this.encoder.run({ input_features: new this.backend.Tensor('float32', features, dims) });
    const name = this.encoder.outputNames.includes('last_hidden_state') ? 'last_hidden_state' : this.encoder.outputNames[0]!;
    for (const [n, t] of Object.entries(out)) if (n !== name) t.dispose();
    return out[name]!;
  }

  /** A cache with nothing in it, for a first step (the encoder's KV comes out of it). */
  emptyCache(rows: number): DecoderCache {
    const past = new Map<string, Tensor>();
    for (const [name, [heads, dim]] of this.pastDims) past.set(name, new this.backend.Tensor('float32', new Float32Array(0), [rows, heads, 0, dim]));
    return { past, rows };
  }

  /**
   * One decoder run over `tokens` ([rows][positions], every row as long) after the cache. The
   * cache moves on: its self-attention KV becomes the presents; its encoder KV is kept from the
   * first step (a cached step recomputes nothing for it).
   */
  async step(tokens: number[][], encoderStates: Tensor, cache: DecoderCache, withCrossAttentions: boolean): Promise<DecoderStep> {
    const { Tensor } = this.backend;
    const rows = tokens.length;
    const positions = tokens[0]!.length;
    const first = [...cache.past.values()].every((t) => t.dims[2] === 0);
    const feeds: Record<string, Tensor> = {
      input_ids: new Tensor('int64', BigInt64Array.from(tokens.flat(), BigInt), [rows, positions]),
      encoder_hidden_states: encoderStates,
    };
    for (const [name, t] of cache.past) feeds[name] = t;
    if (this.decoder.inputNames.includes('use_cache_branch')) feeds.use_cache_branch = new Tensor('bool', Uint8Array.of(first ? 0 : 1), [1]);
    const wanted = new Set<string>([this.logitsName, ...this.presentOf.values()]);
    if (withCrossAttentions) for (const c of this.crossAttentionOutputs) wanted.add(c);
    const out = await this.decoder.run(feeds);
    for (const [name, t] of Object.entries(out)) if (!wanted.has(name)) t.dispose();
    for (const [past, present] of this.presentOf) {
      const keep = first || past.includes('.decoder.');
      const next = out[present]!;
      if (keep) {
        cache.past.get(past)?.dispose();
        cache.past.set(past, next);
      } else next.dispose();
    }
    const logits = out[this.logitsName]!;
    const step: DecoderStep = { logits: toFloat32(logits), positions, vocab: logits.dims[2]! };
    if (withCrossAttentions && this.crossAttentionOutputs.length) {
      const ca = this.crossAttentionOutputs.map((n) => out[n]!);
      step.crossAttentions = ca.map(toFloat32);
      step.heads = ca[0]!.dims[1];
      step.frames = ca[0]!.dims[3];
    }
    return step;
  }

  /** Keeps only `keep`'s rows of a cache (rows that finished leave the batch). */
  selectRows(cache: DecoderCache, keep: number[]): DecoderCache {
    const { Tensor } = this.backend;
    const past = new Map<string, Tensor>();
    for (const [name, t] of cache.past) {
      const [, heads, len, dim] = t.dims as number[];
      const block = heads! * len! * dim!;
      const src = t.data as Float32Array;
      const data = new Float32Array(keep.length * block);
      keep.forEach((r, i) => data.set(src.subarray(r * block, (r + 1) * block), i * block));
      past.set(name, new Tensor(t.type as 'float32', data, [keep.length, heads!, len!, dim!]));
      t.dispose();
    }
    return { past, rows: keep.length };
  }

  /** The encoder states of `keep`'s rows. */
  selectStates(states: Tensor, keep: number[]): Tensor {
    const [, frames, width] = states.dims as number[];
    const block = frames! * width!;
    const src = states.data as Float32Array;
    const data = new Float32Array(keep.length * block);
    keep.forEach((r, i) => data.set(src.subarray(r * block, (r + 1) * block), i * block));
    return new this.backend.Tensor('float32', data, [keep.length, frames!, width!]);
  }

  disposeCache(cache: DecoderCache): void {
    for (const t of cache.past.values()) t.dispose();
    cache.past.clear();
  }

  async dispose(): Promise<void> {
    await this.encoder.release().catch(() => undefined);
    await this.decoder.release().catch(() => undefined);
  }
}

function layerOf(name: string): number {
  return Number(name.split('.')[1]);
}

function metadataShape(session: InferenceSession, name: string): readonly (number | string)[] | undefined {
  const meta = (session as unknown as { inputMetadata?: { name: string; shape?: readonly (number | string)[] }[] }).inputMetadata;
  return meta?.find((m) => m.name === name)?.shape;
}

/** fp16 exports give float16 logits and attentions: widened once here. */
function toFloat32(t: Tensor): Float32Array {
  const d = t.data;
  if (d instanceof Float32Array) return d;
  if (d instanceof Uint16Array) return Float32Array.from(d, halfToFloat);
  return Float32Array.from(d as ArrayLike<number>);
}

function halfToFloat(h: number): number {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const f = h & 0x3ff;
  if (e === 0) return s * 2 ** -14 * (f / 1024);
  if (e === 31) return f ? NaN : s * Infinity;
  return s * 2 ** (e - 15) * (1 + f / 1024);
}
