import type { Backend, InferenceSession, Tensor } from '../../backends/types.js';
import { batchRow, gatherPlan, runOnHost, seqRow, splicePlan, type CopyPlan } from '../kv/copy-plan.js';
import { isOnDevice, type BatchKv, type KvShape, type SeqCache, type SeqKv } from '../kv/layout.js';
import type { CatalogEntry } from '../protocol.js';
import type { StepTimings } from '../step-timings.js';
import { createModelSession, isVisionType, joinPath, onnxFileFor, readJson, textConfigOf, VLM_GRAPHS } from './files.js';
import { readGraphOps } from './graph-ops.js';
import { emptyKv, readDecoderInterface, type DecoderConfig, type DecoderInterface, type KvArray } from './interface.js';
import { LogitsHead, StepLogits, type BestTokens, type HeadTopK } from './logits-head.js';
import { freeHostBuffers } from './host-buffers.js';
import { LOGITS_POSITION_INPUT } from './logits-pick.js';
import { decoderEdit } from './decoder-edits.js';
import { BEST_ID_OUTPUT, BEST_LOGIT_OUTPUT, bestTokenFormFor } from './best-token.js';
import { ropeAt, type RopePositions } from '../vision/mrope.js';
import { TokenEmbedder, type EmbedSplice } from './token-embedder.js';

export type { EmbedSplice };

/** A prompt chunk to prefill: its new tokens after its cached ones, and image features over some of them (at positions of `tokens`). */
export interface PrefillInput {
  tokens: number[];
  past: SeqCache | null;
  splices?: readonly EmbedSplice[];
  /** A multimodal-position prompt's positions (absent: each token's index). */
  rope?: RopePositions;
}

/** One sequence's logits in a run: row `index` of `step`. */
export interface LogitsRow {
  step: StepLogits;
  index: number;
}

interface LlmConfig extends DecoderConfig {
  num_hidden_layers?: number;
  vocab_size: number;
  eos_token_id?: number | number[];
  /** A VLM's text model. */
  text_config?: LlmConfig;
}

/**
 * A decoder-only model exported the way transformers.js expects (input_ids,
 * attention_mask, past_key_values.N.key|value, and position_ids, num_logits_to_keep,
 * use_cache_branch where the graph has them → logits, present.N.*), or the way
 * onnxruntime-genai's model builder writes it (GroupQueryAttention: no position_ids, each
 * row's cache a prefix, so batches are padded on the right). What it feeds, in which
 * types, and which side it pads comes from the session and the graph (interface.ts). It
 * only runs the graph; sequences, sampling and scheduling live elsewhere.
 */
export class CausalLM {
  private constructor(
    private readonly backend: Backend,
    private readonly session: InferenceSession,
    private readonly head: LogitsHead,
    readonly io: DecoderInterface,
    readonly vocabSize: number,
    readonly eosIds: number[],
    /** A VLM's token table: its decoder takes inputs_embeds. */
    private readonly embedder?: TokenEmbedder,
  ) {}

  static async load(backend: Backend, folder: string, entry: CatalogEntry, opts: { headTopK?: HeadTopK } = {}): Promise<CausalLM> {
    const top = await readJson<LlmConfig>(backend, joinPath(folder, 'config.json'));
    if (!top) throw new Error(`${entry.id}: config.json is missing in ${folder}`);
    // A VLM: the decoder is its text model, fed embeddings (onnx-community's layout, files.ts VLM_GRAPHS).
    const vision = isVisionType(top.model_type);
    const config: LlmConfig = vision ? { ...textConfigOf(top), eos_token_id: top.text_config?.eos_token_id ?? top.eos_token_id } : top;
    const graph = vision ? VLM_GRAPHS.decoder : 'model';
    const gen = await readJson<{ eos_token_id?: number | number[] }>(backend, joinPath(folder, 'generation_config.json'));
    const eos = gen?.eos_token_id ?? config.eos_token_id ?? [];
    // The present.* outputs (named from the config, as transformers.js's getCacheNames does) may stay on the device.
    // So may the logits: the sampling head reads them there (logits-head.ts).
    const presents = Array.from({ length: config.num_hidden_layers ?? 0 }, (_, i) => [`present.${i}.key`, `present.${i}.value`]).flat();
    // Prefill needs one row of logits per prompt: where the export cannot say so (no
    // num_logits_to_keep), lm_head is given a position per row at load. Each position's best
    // token comes out beside the logits, read with the run (best-token.ts).
    const session = await createModelSession(backend, folder, entry, [...presents, 'logits'], decoderEdit(bestTokenFormFor(backend.device)), graph);
    let io: DecoderInterface;
    let head: LogitsHead;
    let embedder: TokenEmbedder | undefined;
    try {
      const ops = await readGraphOps(backend, joinPath(folder, onnxFileFor(entry, backend.device, graph)));
      io = readDecoderInterface(session, config, 'logits', ops);
      head = await LogitsHead.open(backend, logitsWidth(session) ?? config.vocab_size, io.logitsType, opts.headTopK);
      if (io.inputsEmbeds) embedder = await TokenEmbedder.load(backend, folder, entry);
    } catch (e) {
      await session.release();
      throw e;
    }
    return new CausalLM(backend, session, head, io, config.vocab_size, Array.isArray(eos) ? eos : [eos], embedder);
  }

  /**
   * KV caches read back from the device (GPU → CPU), for tests and stats. `batch`: to change
   * the batch on the host, where the backend cannot copy on the device (none on WebGPU);
   * `prefixCache`: a sequence's cache stored in the prefix cache, which keeps host arrays.
   */
  readonly reads = { batch: 0, prefixCache: 0 };

  get kvShape(): KvShape {
    return { layers: this.io.layers, kvHeads: this.io.kvHeads, headDim: this.io.headDim };
  }

  /** Runs one sequence's `tokens` after its cached ones: the logits of the last position and the extended cache. */
  async prefill(tokens: number[], past: SeqCache | null, splices?: readonly EmbedSplice[], rope?: RopePositions): Promise<{ logits: LogitsRow; kv: SeqCache }> {
    const pastLen = past?.length ?? 0;
    const out = await this.run(
      [tokens],
      [Array.from(tokens, (_, i) => pastLen + i)],
      new BigInt64Array(pastLen + tokens.length).fill(1n),
      pastLen,
      past ? tensorsOf(past) : null,
      { last: [[tokens.length - 1]], splices: [splices], ropes: [rope] },
    );
    this.release(past); // an earlier chunk's device cache: present.* replaces it
    const [, rows] = out.logits.dims;
    // With num_logits_to_keep only the last position comes back.
    const logits = { step: new StepLogits(this.head, out.logits, [rows - 1], out.best), index: 0 };
    const length = pastLen + tokens.length;
    // On WebGPU the cache stays in its GPU buffers, to be copied into the batch there.
    const kv: SeqCache = out.kv.some((t) => t.location === 'gpu-buffer') ? { length, device: out.kv } : { length, data: out.kv.map((t) => t.data as KvArray) };
    return { logits, kv };
  }

  /**
   * Whether a prompt chunk after `past` cached tokens needs a graph run of its own: with
   * GroupQueryAttention onnxruntime takes several rows in one run only as first prompts (no
   * past) or one token each, so a chunk after a past is not grouped with others.
   */
  runsAlone(chunk: { past: number; tokens: number }): boolean {
    return !this.io.batchesPrefixedChunks && chunk.past > 0;
  }

  /**
   * Prefills several sequences in one run, each row its new tokens after its cached ones,
   * the mask hiding the padding and the positions counting real tokens only, so each row
   * sees exactly what it would see alone. Left padding: the pasts padded to the longest
   * past, the new tokens to the longest chunk, each on the left. Right padding
   * (GroupQueryAttention): each row a prefix, its past then its new tokens from slot 0, its
   * logits taken at its own last token; where onnxruntime cannot run the rows together
   * (several tokens after a past) each runs alone.
   */
  async prefillMany(items: PrefillInput[]): Promise<{ logits: LogitsRow; kv: SeqCache }[]> {
    if (items.length === 1) return [await this.prefill(items[0].tokens, items[0].past, items[0].splices, items[0].rope)];
    const W = Math.max(...items.map((it) => it.past?.length ?? 0));
    const S = Math.max(...items.map((it) => it.tokens.length));
    if (!this.io.batchesPrefixedChunks && W > 0 && S > 1) {
      const results = [];
      for (const it of items) results.push(await this.prefill(it.tokens, it.past, it.splices, it.rope));
      return results;
    }
    const right = this.io.padding === 'right';
    // The pasts, padded into one batch (rows without one copy nothing: source 0 stands in).
    const pasts = items.flatMap((it) => (it.past ? [it.past] : []));
    let source = 0;
    const rows = items.map((it) => seqRow(it.past ? source++ : 0, it.past?.length ?? 0));
    const packed = pasts.length ? await this.copy(gatherPlan(this.kvShape, rows, this.io.padding), pasts.map(tensorsOf), 'batch') : null;
    const mask = new BigInt64Array(items.length * (W + S));
    const ids: number[][] = [];
    const positions: number[][] = [];
    items.forEach(({ tokens, past }, r) => {
      const p = past?.length ?? 0;
      const pad = new Array<number>(S - tokens.length).fill(tokens[0]);
      const row = r * (W + S);
      if (right) {
        mask.fill(1n, row, row + p + tokens.length);
        ids.push([...tokens, ...pad]);
        positions.push(Array.from({ length: S }, (_, k) => p + Math.min(k, tokens.length - 1)));
      } else {
        mask.fill(1n, row + W - p, row + W);
        mask.fill(1n, row + W + pad.length, row + W + S);
        ids.push([...pad, ...tokens]);
        positions.push(Array.from({ length: S }, (_, k) => Math.max(0, p + k - pad.length)));
      }
    });
    let out: Awaited<ReturnType<CausalLM['run']>>;
    try {
      // Right-padded rows end at different positions: each row's own (or, where the graph can
      // only keep the last, every position's logits come back).
      const last = items.map(({ tokens }) => [right ? tokens.length - 1 : S - 1]);
      // Left padding moves each row's tokens (and so its image features) right by its padding.
      const splices = items.map(({ tokens, splices }) => splices?.map((x) => ({ ...x, at: x.at + (right ? 0 : S - tokens.length) })));
      const ropes = items.map((it) => it.rope);
      out = await this.run(ids, positions, mask, W, packed ? (packed.device ?? packed.data) : null, { keepAll: right && S > 1, last, splices, ropes });
    } finally {
      this.releaseOwned(packed); // the pasts padded for this run alone
    }
    for (const it of items) this.release(it.past); // earlier chunks' device caches: present.* replaces them
    const [, len] = out.logits.dims;
    // A right-padded row ends at its own last token; left-padded ones all end at the last
    // position (the only one num_logits_to_keep leaves).
    const step = new StepLogits(this.head, out.logits, items.map(({ tokens }, r) => r * len + (right && len === S ? tokens.length - 1 : len - 1)), out.best);
    const onDevice = out.kv.some((t) => t.location === 'gpu-buffer');
    const presents = onDevice ? out.kv : out.kv.map((t) => t.data as KvArray);
    const results = [];
    for (const [r, { tokens, past }] of items.entries()) {
      const p = past?.length ?? 0;
      const ranges: [number, number][] = right ? [[0, p + tokens.length]] : [[W - p, W], [W + S - tokens.length, W + S]];
      const plan = splicePlan(this.kvShape, r, W + S, ranges);
      const kv = await this.copy(plan, [presents], 'batch');
      results.push({
        logits: { step, index: r },
        kv: kv.device ? { length: plan.width, device: kv.device } : { length: plan.width, data: kv.data },
      });
    }
    this.releaseOwned(onDevice ? { device: out.kv } : { data: presents as KvArray[] }); // each row has its own copy
    return results;
  }

  /**
   * One decode step for a padded batch: row r takes `tokens[r]` and returns its next-token
   * logits. A right-padded row's new entry lands right after its own (GroupQueryAttention
   * writes it at slot seqlens_k), so its padding stays on the right.
   */
  async decode(tokens: number[], batch: BatchKv, timings?: StepTimings, ropes?: (RopePositions | undefined)[]): Promise<{ logits: StepLogits; kv: BatchKv }> {
    const { width, pads, padding } = batch;
    const t0 = performance.now();
    const mask = new BigInt64Array(tokens.length * (width + 1));
    pads.forEach((pad, r) => {
      const row = r * (width + 1);
      if (padding === 'right') mask.fill(1n, row, row + width - pad + 1);
      else mask.fill(1n, row + pad, row + width + 1);
    });
    const out = await this.run(tokens.map((t) => [t]), pads.map((pad) => [width - pad]), mask, width, batch.device ?? batch.data, { timings, started: t0, last: tokens.map(() => [0]), ropes });
    this.releaseOwned(batch); // the step has read it; present.* replaces it
    const logits = new StepLogits(this.head, out.logits, tokens.map((_, r) => r), out.best);
    const onDevice = out.kv.some((t) => t.location === 'gpu-buffer');
    const kv: BatchKv = onDevice ? { width: width + 1, pads, padding, data: null, device: out.kv } : { width: width + 1, pads, padding, data: out.kv.map((t) => t.data as KvArray) };
    return { logits, kv };
  }

  /**
   * A speculative step for a batch of one unpadded row: `tokens` (its last sampled token, then
   * the drafts) after its cache, with the logits at every one of them (row j of `logits`
   * predicts what follows tokens[j]). The cache grows by all of them: keepPrefix() then drops
   * the drafts that were not accepted. Fused graphs take several tokens after a past only at
   * batch 1 (onnxruntime refuses more rows), which is why this takes one row.
   */
  async verify(tokens: number[], batch: BatchKv, timings?: StepTimings, rope?: RopePositions): Promise<{ logits: StepLogits; kv: BatchKv }> {
    if (batch.pads.length !== 1 || batch.pads[0] !== 0) throw new Error('verify takes a batch of one row without padding');
    const { width } = batch;
    const n = tokens.length;
    const t0 = performance.now();
    const at = tokens.map((_, j) => j);
    const out = await this.run([tokens], [at.map((j) => width + j)], new BigInt64Array(width + n).fill(1n), width, batch.device ?? batch.data, {
      timings,
      started: t0,
      keepAll: true,
      last: [at],
      ropes: [rope],
    });
    this.releaseOwned(batch); // the step has read it; present.* replaces it
    // Picked, or every position kept: either way the last n rows are the tokens'.
    const [, len] = out.logits.dims;
    const logits = new StepLogits(this.head, out.logits, at.map((j) => len - n + j), out.best);
    const onDevice = out.kv.some((t) => t.location === 'gpu-buffer');
    const grown = { width: width + n, pads: [0], padding: batch.padding };
    const kv: BatchKv = onDevice ? { ...grown, data: null, device: out.kv } : { ...grown, data: out.kv.map((t) => t.data as KvArray) };
    return { logits, kv };
  }

  /** A batch of one row cut to its first `length` entries (rejected drafts leave the cache); it consumes `batch`. */
  async keepPrefix(batch: BatchKv, length: number): Promise<BatchKv> {
    if (length === batch.width) return batch;
    try {
      const plan = gatherPlan(this.kvShape, [{ ...batchRow(0, batch, 0), length }], this.io.padding);
      const out = await this.copy(plan, [tensorsOf(batch)], 'batch');
      return { width: plan.width, pads: plan.pads, padding: plan.padding, ...out };
    } finally {
      this.releaseOwned(batch);
    }
  }

  /** `last`: the positions of each row whose logits are wanted (as many for each row); `keepAll`: every position's, where the graph can keep only the last. */
  private async run(
    ids: number[][],
    positions: number[][],
    mask: BigInt64Array,
    pastLen: number,
    past: KvArray[] | Tensor[] | null,
    {
      timings,
      started = 0,
      keepAll = false,
      last,
      splices,
      ropes,
    }: { timings?: StepTimings; started?: number; keepAll?: boolean; last: number[][]; splices?: (readonly EmbedSplice[] | undefined)[]; ropes?: (RopePositions | undefined)[] },
  ): Promise<{ logits: Tensor; kv: Tensor[]; best?: BestTokens }> {
    const { Tensor } = this.backend;
    const io = this.io;
    const rows = ids.length;
    const len = ids[0].length;
    const feeds: Record<string, Tensor> = { attention_mask: new Tensor('int64', mask, [rows, pastLen + len]) };
    if (this.embedder) feeds.inputs_embeds = await this.embedder.embed(ids, splices);
    else feeds.input_ids = new Tensor('int64', BigInt64Array.from(ids.flat(), BigInt), [rows, len]);
    if (io.multimodalPositions) {
      // [3, rows, len]: each token's temporal, height and width position (its index where it has no table).
      const flat = new BigInt64Array(3 * rows * len);
      for (let k = 0; k < 3; k++)
        for (let r = 0; r < rows; r++) for (let j = 0; j < len; j++) flat[(k * rows + r) * len + j] = BigInt(ropeAt(ropes?.[r], positions[r]![j]!, k) + io.positionStart);
      feeds.position_ids = new Tensor('int64', flat, [3, rows, len]);
    } else if (io.positionIds) {
      const start = BigInt(io.positionStart);
      feeds.position_ids = new Tensor('int64', BigInt64Array.from(positions.flat(), (p) => BigInt(p) + start), [rows, len]);
    }
    // 0 keeps them all (the graph slices the last −0 = 0 positions on).
    if (io.numLogitsToKeep) feeds.num_logits_to_keep = new Tensor('int64', BigInt64Array.of(keepAll ? 0n : 1n), []);
    if (io.logitsPosition) feeds[LOGITS_POSITION_INPUT] = new Tensor('int64', BigInt64Array.from(last.flat(), BigInt), [rows, last[0].length]);
    if (io.useCacheBranch) feeds.use_cache_branch = new Tensor('bool', Uint8Array.of(pastLen > 0 ? 1 : 0), [1]);
    const kvDims = [rows, io.kvHeads, pastLen, io.headDim];
    const empty = emptyKv(io.kvType);
    const pastTensor = (x: KvArray | Tensor | undefined): Tensor =>
      x === undefined || ArrayBuffer.isView(x) ? new Tensor(io.kvType, x ?? empty, kvDims) : x;
    for (let i = 0; i < io.layers; i++) {
      feeds[`past_key_values.${i}.key`] = pastTensor(past?.[2 * i]);
      feeds[`past_key_values.${i}.value`] = pastTensor(past?.[2 * i + 1]);
    }
    const ran = timings?.lap('feeds', started) ?? 0;
    const out = await this.session.run(feeds);
    timings?.lap('graph', ran);
    const kv: Tensor[] = [];
    for (let i = 0; i < io.layers; i++) kv.push(out[`present.${i}.key`], out[`present.${i}.value`]);
    const [bestIds, bestLogits] = [out[BEST_ID_OUTPUT], out[BEST_LOGIT_OUTPUT]];
    return { logits: out.logits, kv, ...(bestIds && bestLogits ? { best: { ids: bestIds.data as Float32Array, logits: bestLogits.data as Float32Array } } : {}) };
  }

  /**
   * The batch of `keep` (rows of `batch`, in order) followed by `joining`: copied on the
   * device where every part is there and the backend can, else on the host (device parts
   * read back, counted in `reads.batch`). It consumes its inputs: the old batch's and the
   * joining caches' device buffers are released. Null when no rows are left.
   */
  async repack(batch: BatchKv | null, keep: number[], joining: SeqCache[]): Promise<BatchKv | null> {
    try {
      if (keep.length + joining.length === 0) return null;
      // Source 0 is the old batch when rows of it stay; then the joining caches, in order.
      const first = keep.length ? 1 : 0;
      const rows = [...keep.map((r) => batchRow(0, batch!, r)), ...joining.map((kv, i) => seqRow(first + i, kv.length))];
      const sources = [...(keep.length ? [tensorsOf(batch!)] : []), ...joining.map(tensorsOf)];
      const plan = gatherPlan(this.kvShape, rows, this.io.padding);
      const out = await this.copy(plan, sources, 'batch');
      return { width: plan.width, pads: plan.pads, padding: plan.padding, ...out };
    } finally {
      this.releaseOwned(batch); // copied into the new batch
      for (const kv of joining) this.release(kv); // theirs may be the prefix cache's arrays: device buffers only
    }
  }

  /** Row r of a batch as a host cache, for the prefix cache (on the device: copied out there, then only it read back). */
  async rowToHost(batch: BatchKv, r: number): Promise<SeqKv> {
    return this.toHost(gatherPlan(this.kvShape, [batchRow(0, batch, r)]), tensorsOf(batch));
  }

  /** A sequence's cache on the host, for the prefix cache; a device cache stays valid (a copy is read back). */
  async seqToHost(kv: SeqCache): Promise<SeqKv> {
    if (!isOnDevice(kv)) return kv;
    return this.toHost(gatherPlan(this.kvShape, [seqRow(0, kv.length)]), kv.device);
  }

  private async toHost(plan: CopyPlan, source: KvArray[] | Tensor[]): Promise<SeqKv> {
    // Where device tensors cannot be read back (onnxruntime-node), the copy itself lands on the host.
    if (this.backend.copyToHost && source.some(isDeviceTensor)) {
      const data = await this.backend.copyToHost(plan, [source as Tensor[]]);
      this.reads.prefixCache++;
      return { length: plan.width, data };
    }
    const out = await this.copy(plan, [source], 'prefixCache');
    if (out.data) return { length: plan.width, data: out.data };
    this.reads.prefixCache++;
    return { length: plan.width, data: await Promise.all(out.device.map((t) => t.getData(true) as Promise<KvArray>)) };
  }

  /**
   * Runs a copy plan where its sources are: on the device if any is there and the backend
   * can (host parts, a prefix-cache hit, go up as host tensors), else on the host.
   */
  private async copy(plan: CopyPlan, sources: (KvArray[] | Tensor[])[], why: keyof CausalLM['reads']): Promise<{ data: KvArray[]; device?: undefined } | { data: null; device: Tensor[] }> {
    if (sources.some((s) => s.some(isDeviceTensor)) && this.backend.copyOnDevice) {
      const { Tensor } = this.backend;
      const asTensor = (x: KvArray | Tensor): Tensor => (ArrayBuffer.isView(x) ? new Tensor(this.io.kvType, x, [x.length]) : x);
      const device = await this.backend.copyOnDevice(plan, sources.map((s) => (s as (KvArray | Tensor)[]).map(asTensor)));
      if (device) return { data: null, device };
    }
    // The host path: device parts are read back (getData turns such a tensor into a host one; the caller still disposes it).
    if (sources.some((s) => s.some(isDeviceTensor))) this.reads[why]++;
    const hostArray = async (x: KvArray | Tensor): Promise<KvArray> => (ArrayBuffer.isView(x) ? x : ((await x.getData()) as KvArray));
    const host = await Promise.all(sources.map((s) => Promise.all((s as (KvArray | Tensor)[]).map(hostArray))));
    return { data: runOnHost(plan, host) };
  }

  /** Frees a cache's device buffers (a batch or sequence cache that is dropped or replaced); host arrays are left to the GC. */
  release(kv: BatchKv | SeqCache | null): void {
    for (const t of (kv && 'device' in kv ? kv.device : undefined) ?? []) t.dispose();
  }

  /**
   * Frees a cache this model owns alone (a batch's, or a copy made for one run): its device
   * buffers and its host arrays (host-buffers.ts). Never a sequence's cache: the prefix cache
   * may hold its arrays.
   */
  private releaseOwned(kv: { data?: KvArray[] | null; device?: Tensor[] | null } | null | undefined): void {
    for (const t of kv?.device ?? []) t.dispose();
    freeHostBuffers(kv?.data);
  }

  /**
   * A one-token prefill and one decode step through the real feeds, so that a graph
   * Hearth cannot run fails at load with onnxruntime's message.
   */
  async warmUp(token = 0): Promise<void> {
    const first = await this.prefill([token], null);
    await first.logits.step.candidates([0], [1]);
    await first.logits.step.best([0]);
    first.logits.step.dispose();
    const batch = await this.repack(null, [], [first.kv]);
    const step = await this.decode([token], batch!);
    await step.logits.whole([0]);
    step.logits.dispose();
    this.release(step.kv);
  }

  async dispose(): Promise<void> {
    await this.head.dispose();
    await this.embedder?.dispose();
    await this.session.release();
  }
}

const isDeviceTensor = (x: KvArray | Tensor): x is Tensor => !ArrayBuffer.isView(x) && x.location === 'gpu-buffer';

/** A cache's 2 × layers tensors as they are fed: device tensors, or host arrays. */
function tensorsOf(kv: BatchKv | SeqCache): KvArray[] | Tensor[] {
  if ('device' in kv && kv.device) return kv.device;
  if (!('data' in kv) || !kv.data) throw new Error('a KV cache with neither host nor device tensors (already released)');
  return kv.data;
}

/** The width of the logits where the graph fixes it (a padded vocabulary may pass config.vocab_size). */
function logitsWidth(session: InferenceSession): number | undefined {
  const meta = session.outputMetadata.find((m) => m.name === 'logits');
  const last = meta?.isTensor ? meta.shape.at(-1) : undefined;
  return typeof last === 'number' ? last : undefined;
}
