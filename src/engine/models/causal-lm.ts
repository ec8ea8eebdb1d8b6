import type { Backend, InferenceSession, Tensor } from '../../backends/types.js';
import { gatherRow, packBatch, type BatchKv, type KvShape, type SeqKv } from '../kv/layout.js';
import { KvOutputArena } from '../kv/output-arena.js';
import type { CatalogEntry } from '../protocol.js';
import type { StepTimings } from '../step-timings.js';
import { createModelSession, joinPath, readJson } from './files.js';
import { emptyKv, readDecoderInterface, toFloat32, type DecoderConfig, type DecoderInterface, type KvArray } from './interface.js';

interface LlmConfig extends DecoderConfig {
  num_hidden_layers?: number;
  vocab_size: number;
  eos_token_id?: number | number[];
}

/**
 * A decoder-only model exported the way transformers.js expects (input_ids,
 * attention_mask, past_key_values.N.key|value, and position_ids, num_logits_to_keep,
 * use_cache_branch where the graph has them → logits, present.N.*). What it feeds,
 * and in which types, comes from the session (interface.ts). It only runs the
 * graph; sequences, sampling and scheduling live elsewhere.
 */
export class CausalLM {
  private constructor(
    private readonly backend: Backend,
    private readonly session: InferenceSession,
    readonly io: DecoderInterface,
    readonly vocabSize: number,
    readonly eosIds: number[],
  ) {
    this.arena = backend.preallocatesOutputs ? new KvOutputArena() : null;
  }

  static async load(backend: Backend, folder: string, entry: CatalogEntry): Promise<CausalLM> {
    const config = await readJson<LlmConfig>(backend, joinPath(folder, 'config.json'));
    if (!config) throw new Error(`${entry.id}: config.json is missing in ${folder}`);
    const gen = await readJson<{ eos_token_id?: number | number[] }>(backend, joinPath(folder, 'generation_config.json'));
    const eos = gen?.eos_token_id ?? config.eos_token_id ?? [];
    // The present.* outputs (named from the config, as transformers.js's getCacheNames does) may stay on the device.
    const presents = Array.from({ length: config.num_hidden_layers ?? 0 }, (_, i) => [`present.${i}.key`, `present.${i}.value`]).flat();
    const session = await createModelSession(backend, folder, entry, presents);
    let io: DecoderInterface;
    try {
      io = readDecoderInterface(session, config);
    } catch (e) {
      await session.release();
      throw e;
    }
    return new CausalLM(backend, session, io, config.vocab_size, Array.isArray(eos) ? eos : [eos]);
  }

  /** KV caches read back from the device (GPU → CPU), for tests and stats: only batch changes need them. */
  downloads = 0;

  /** Where decode steps write present.*, when the backend takes output buffers. */
  private readonly arena: KvOutputArena | null;

  get kvShape(): KvShape {
    return { layers: this.io.layers, kvHeads: this.io.kvHeads, headDim: this.io.headDim };
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
    const [, rows, vocab] = out.logits.dims;
    // With num_logits_to_keep only the last position comes back.
    const logits = toFloat32(out.logits, (rows - 1) * vocab, rows * vocab);
    // A prefilled sequence is packed into the batch on the CPU when it joins.
    return { logits, kv: { length: pastLen + tokens.length, data: await this.hostData(out.kv) } };
  }

  /**
   * Prefills several sequences in one run, each row its new tokens after its cached ones.
   * Rows are left-padded twice, the pasts to the longest past and the new tokens to the
   * longest chunk; the mask hides both paddings and the positions count real tokens only,
   * so each row sees exactly what it would see alone.
   */
  async prefillMany(items: { tokens: number[]; past: SeqKv | null }[]): Promise<{ logits: Float32Array; kv: SeqKv }[]> {
    if (items.length === 1) return [await this.prefill(items[0].tokens, items[0].past)];
    const W = Math.max(...items.map((it) => it.past?.length ?? 0));
    const S = Math.max(...items.map((it) => it.tokens.length));
    const none: SeqKv = { length: 0, data: Array.from({ length: 2 * this.io.layers }, () => emptyKv(this.io.kvType)) };
    const pasts = packBatch(this.kvShape, items.map((it) => it.past ?? none));
    const mask = new BigInt64Array(items.length * (W + S));
    const ids: number[][] = [];
    const positions: number[][] = [];
    items.forEach(({ tokens, past }, r) => {
      const p = past?.length ?? 0;
      const pad = S - tokens.length;
      mask.fill(1n, r * (W + S) + W - p, r * (W + S) + W);
      mask.fill(1n, r * (W + S) + W + pad, (r + 1) * (W + S));
      ids.push([...new Array<number>(pad).fill(tokens[0]), ...tokens]);
      positions.push(Array.from({ length: S }, (_, k) => Math.max(0, p + k - pad)));
    });
    const out = await this.run(ids, positions, mask, W, pasts.data);
    const [, rows, vocab] = out.logits.dims;
    const kv = await this.hostData(out.kv);
    return items.map(({ tokens, past }, r) => ({
      // With num_logits_to_keep only the last position comes back; every row ends there.
      logits: toFloat32(out.logits, (r * rows + rows - 1) * vocab, (r * rows + rows) * vocab),
      kv: gatherRow(this.kvShape, kv, W + S, r, [
        [W - (past?.length ?? 0), W],
        [W + S - tokens.length, W + S],
      ]),
    }));
  }

  /** One decode step for a left-padded batch: row r takes `tokens[r]` and returns its next-token logits. */
  async decode(tokens: number[], batch: BatchKv, timings?: StepTimings): Promise<{ logits: Float32Array[]; kv: BatchKv }> {
    const { width, pads } = batch;
    const t0 = performance.now();
    const mask = new BigInt64Array(tokens.length * (width + 1));
    pads.forEach((pad, r) => mask.fill(1n, r * (width + 1) + pad, (r + 1) * (width + 1)));
    const past = batch.device ?? batch.data;
    const into = this.arena && batch.data ? this.arena.next(batch.data[0], batch.data.length, tokens.length * this.io.kvHeads * (width + 1) * this.io.headDim) : undefined;
    const out = await this.run(tokens.map((t) => [t]), pads.map((pad) => [width - pad]), mask, width, past, timings, t0, into);
    for (const t of batch.device ?? []) t.dispose(); // the step has read them; present.* replaces them
    const t1 = performance.now();
    const vocab = out.logits.dims[2];
    const all = toFloat32(out.logits, 0, tokens.length * vocab);
    const logits = tokens.map((_, r) => all.subarray(r * vocab, (r + 1) * vocab));
    const onDevice = out.kv.some((t) => t.location === 'gpu-buffer');
    // The binding hands back a copy of each output handed in; the arena's arrays hold the same values.
    const data = into ?? out.kv.map((t) => t.data as KvArray);
    const kv: BatchKv = onDevice ? { width: width + 1, pads, data: null, device: out.kv } : { width: width + 1, pads, data };
    timings?.lap('logits', t1);
    return { logits, kv };
  }

  private async run(
    ids: number[][],
    positions: number[][],
    mask: BigInt64Array,
    pastLen: number,
    past: KvArray[] | Tensor[] | null,
    timings?: StepTimings,
    started = 0,
    /** Arrays for present.* to be written into (2 × layers, each [rows, kv_heads, pastLen + len, head_dim]). */
    into?: KvArray[],
  ): Promise<{ logits: Tensor; kv: Tensor[] }> {
    const { Tensor } = this.backend;
    const io = this.io;
    const rows = ids.length;
    const len = ids[0].length;
    const feeds: Record<string, Tensor> = {
      input_ids: new Tensor('int64', BigInt64Array.from(ids.flat(), BigInt), [rows, len]),
      attention_mask: new Tensor('int64', mask, [rows, pastLen + len]),
    };
    if (io.positionIds) {
      const start = BigInt(io.positionStart);
      feeds.position_ids = new Tensor('int64', BigInt64Array.from(positions.flat(), (p) => BigInt(p) + start), [rows, len]);
    }
    if (io.numLogitsToKeep) feeds.num_logits_to_keep = new Tensor('int64', BigInt64Array.of(1n), []);
    if (io.useCacheBranch) feeds.use_cache_branch = new Tensor('bool', Uint8Array.of(pastLen > 0 ? 1 : 0), [1]);
    const kvDims = [rows, io.kvHeads, pastLen, io.headDim];
    const empty = emptyKv(io.kvType);
    const pastTensor = (x: KvArray | Tensor | undefined): Tensor =>
      x === undefined || ArrayBuffer.isView(x) ? new Tensor(io.kvType, x ?? empty, kvDims) : x;
    for (let i = 0; i < io.layers; i++) {
      feeds[`past_key_values.${i}.key`] = pastTensor(past?.[2 * i]);
      feeds[`past_key_values.${i}.value`] = pastTensor(past?.[2 * i + 1]);
    }
    let fetches: Record<string, Tensor | null> | undefined;
    if (into) {
      const presentDims = [rows, io.kvHeads, pastLen + len, io.headDim];
      fetches = Object.fromEntries(this.session.outputNames.map((n) => [n, null]));
      for (let i = 0; i < io.layers; i++) {
        fetches[`present.${i}.key`] = new Tensor(io.kvType, into[2 * i], presentDims);
        fetches[`present.${i}.value`] = new Tensor(io.kvType, into[2 * i + 1], presentDims);
      }
    }
    const ran = timings?.lap('feeds', started) ?? 0;
    const out = await (fetches ? this.session.run(feeds, fetches) : this.session.run(feeds));
    timings?.lap('graph', ran);
    const kv: Tensor[] = [];
    for (let i = 0; i < io.layers; i++) kv.push(out[`present.${i}.key`], out[`present.${i}.value`]);
    return { logits: out.logits, kv };
  }

  /** The arrays of present.* tensors, read back (and their GPU buffers released) where they are on the device. */
  private async hostData(tensors: Tensor[]): Promise<KvArray[]> {
    if (!tensors.some((t) => t.location === 'gpu-buffer')) return tensors.map((t) => t.data as KvArray);
    this.downloads++;
    return Promise.all(tensors.map((t) => t.getData(true) as Promise<KvArray>));
  }

  /** Brings a batch cache kept on the device into `data`, for repacking or the prefix cache. */
  async toHost(batch: BatchKv): Promise<void> {
    if (batch.data || !batch.device) return;
    batch.data = await this.hostData(batch.device);
    batch.device = undefined;
  }

  /** Frees a dropped batch cache: its device buffers, and the arena's (no batch is left to read them). */
  release(batch: BatchKv | null): void {
    for (const t of batch?.device ?? []) t.dispose();
    this.arena?.clear();
  }

  /**
   * A one-token prefill and one decode step through the real feeds, so that a graph
   * Hearth cannot run fails at load with onnxruntime's message.
   */
  async warmUp(token = 0): Promise<void> {
    const { kv } = await this.prefill([token], null);
    this.release((await this.decode([token], { width: kv.length, pads: [0], data: kv.data })).kv);
  }

  async dispose(): Promise<void> {
    this.arena?.clear();
    await this.session.release();
  }
}
