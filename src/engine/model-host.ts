import type { Backend } from '../backends/types.js';
import { isHubId } from './catalog.js';
import { EngineError } from './errors.js';
import type { HubFetcher } from './hub/types.js';
import { CausalLM } from './models/causal-lm.js';
import { CrossEncoder } from './models/cross-encoder.js';
import { DecoderEmbedder } from './models/decoder-embedder.js';
import { Encoder, type Embedder } from './models/encoder.js';
import { dtypeFor, isDecoderType, isVisionType, validateCheckpoint } from './models/files.js';
import { checkFit, estimateFit, estimateFromSizes, size, type KvConfig } from './models/fit.js';
import type { CatalogEntry, DownloadProgress, ModelState, ModelStatus, UnloadReason } from './protocol.js';
import type { EngineOptions } from './options.js';
import { PrefixCache } from './kv/prefix-cache.js';
import { Scheduler } from './scheduler.js';
import { DEFAULT_SPECULATIVE } from './spec/draft-policy.js';
import { DraftModel } from './spec/draft-model.js';
import { releaseGrammars } from './structured/index.js';
import { TextCodec } from './text/codec.js';
import { PairEncoder } from './text/pairs.js';
import { VisionModel } from './vision/vision-model.js';
import { SpeechModel } from './speech/speech-model.js';

export const DEFAULT_KV_CACHE_MB = 256;

/** Everything that serves one catalog entry once it is ready. */
export interface LoadedModel {
  codec: TextCodec;
  /** It thinks in `<think>` blocks (its files say so, or its catalog entry). */
  thinks?: boolean;
  lm?: CausalLM;
  scheduler?: Scheduler;
  encoder?: Embedder;
  /** A rerank model: the cross-encoder, and its pairs' encoding (template, truncation). */
  scorer?: CrossEncoder;
  pairs?: PairEncoder;
  /** What this device needed to run the graph right (the adapter's self-check), for /status and the load log. */
  workarounds?: string[];
  /** The model that drafts for this one (speculative decoding), where its entry names one. */
  drafter?: DraftModel;
  /** A vision-language model's processor and vision encoder (its text model is `lm`). */
  vision?: VisionModel;
  /** A transcription model (Whisper): its encoder, decoder and decoding rules. */
  speech?: SpeechModel;
}

export interface HostOptions extends EngineOptions {
  /** Fetches hub sources; without it only local folders load. */
  hub?: HubFetcher;
  /** Another catalog entry by id (a model's `draft`). */
  entryOf?: (id: string) => CatalogEntry | undefined;
}

/**
 * One model's lifecycle: starting → ready, or failed with the reason; a redeploy goes
 * ready → redeploying → ready, with the old instance serving its requests in flight
 * until the new one has loaded and the old one has drained. On demand: unloaded → loading →
 * ready → unloaded again (its sessions and caches released), as often as asked; when and what
 * to unload is the engine's residency policy (residency.ts), never this class's.
 */
export class ModelHost {
  status: ModelStatus = 'starting';
  detail?: string;
  loaded?: LoadedModel;
  download?: DownloadProgress[];
  readonly created = Math.floor(Date.now() / 1000);
  /** Settles when the current load (first load or redeploy) has settled. */
  ready: Promise<void>;
  /** Embedding and score calls running per instance (generations are counted by their scheduler). */
  readonly #embedding = new Map<LoadedModel, number>();
  #removed = false;
  /** Unix ms when this idle model unloads (undefined: busy, kept forever, or not loaded); the residency policy sets it. */
  expiresAt?: number;
  /** When a request last began or ended here: eviction takes the least recently used first. */
  lastUsed = 0;
  /** Until then (unix ms) it counts as busy: loaded for a request that has not reached the engine's queue yet. */
  claimedUntil = 0;
  /** Loads finished, the seconds the last took, and unloads by reason (for metrics). */
  readonly counts = { loads: 0, lastLoadSeconds: 0, unloads: {} as Partial<Record<UnloadReason, number>> };
  /** While an unload runs (draining, then releasing): requests wait for it, then load again. */
  unloading?: Promise<void>;
  /** Requests the engine has begun here and not yet ended (whatever their stage: encoding, queued, running). */
  #active = 0;
  #loading?: Promise<void>;
  #size?: Promise<number | undefined>;
  sizeBytes?: number;

  constructor(
    public entry: CatalogEntry,
    private readonly backend: Backend,
    private readonly opts: HostOptions = {},
    /** Known but not loaded until load() is called (on-demand loading). */
    lazy = false,
  ) {
    if (lazy) {
      this.status = 'unloaded';
      this.ready = Promise.resolve();
    } else {
      this.ready = this.load();
    }
  }

  /**
   * Loads the entry unless it is loaded or loading: requests that ask meanwhile share one load.
   * A failed model stays failed (its detail says why) until it is redeployed, as before.
   */
  load(): Promise<void> {
    if (this.#loading) return this.#loading;
    if (this.loaded || this.status === 'failed' || this.#removed) return this.ready;
    // The first load of an eager start keeps its `starting`; any later one is `loading`.
    if (this.status !== 'starting') this.status = 'loading';
    this.detail = undefined;
    const started = performance.now();
    const run = this.#load(this.entry)
      .then(
        (m) => {
          if (this.#removed) return void this.#release(m);
          this.loaded = m;
          this.status = 'ready';
          this.detail = undefined;
          this.counts.loads++;
          this.counts.lastLoadSeconds = (performance.now() - started) / 1000;
        },
        (e: unknown) => {
          this.status = 'failed';
          this.detail = e instanceof Error ? e.message : String(e);
        },
      )
      .finally(() => (this.#loading = undefined));
    this.#loading = run;
    this.ready = run;
    return run;
  }

  /** Whether a load is running now. */
  get loadingNow(): boolean {
    return this.#loading !== undefined;
  }

  /**
   * Unloads the instance: once its requests in flight have ended (cut after REDEPLOY_DRAIN_MS),
   * or at once with `force` (generations end with model_not_ready); then its sessions, KV and
   * prefix cache and grammars are released and the status is `unloaded`. Requests arriving
   * meanwhile wait for it (see `unloading`) and load the model again.
   */
  unload(reason: UnloadReason, opts: { force?: boolean } = {}): Promise<void> {
    const cut = () => this.loaded?.scheduler?.abortAll(new EngineError('model_not_ready', `${this.entry.id} was unloaded while this request ran; retry`, null, 1));
    if (this.unloading) {
      if (opts.force) cut();
      return this.unloading;
    }
    const run = (async () => {
      await this.ready; // a load in progress finishes first
      const m = this.loaded;
      if (!m || this.#removed) return;
      if (opts.force) cut();
      await this.#drain(m, REDEPLOY_DRAIN_MS, () => this.#active > 0);
      cut(); // whatever still runs past the deadline
      this.loaded = undefined;
      this.expiresAt = undefined;
      await this.#release(m);
      this.backend.reclaim?.(); // the model's JS side (graph bytes, tokenizer, host KV) goes now, not at some later collection
      this.status = 'unloaded';
      this.detail = undefined;
      this.counts.unloads[reason] = (this.counts.unloads[reason] ?? 0) + 1;
    })().finally(() => (this.unloading = undefined));
    this.unloading = run;
    return run;
  }

  /** A request begins here: it is in flight until end(), so no unload or eviction takes the model from under it. */
  begin(): void {
    this.#active++;
    this.lastUsed = Date.now();
    this.expiresAt = undefined;
    this.claimedUntil = 0;
  }

  /** A request ended; returns how many are still in flight. */
  end(): number {
    this.#active = Math.max(0, this.#active - 1);
    this.lastUsed = Date.now();
    return this.#active;
  }

  /** Requests begun and not yet ended. */
  get requests(): number {
    return this.#active;
  }

  /**
   * Requests in flight (or a load's claim): an unload now would cut them. The engine's own count
   * decides, not the scheduler's, which still holds a finished sequence for a moment after its
   * result (an unload's drain waits for that).
   */
  busy(): boolean {
    return this.#active > 0 || this.claimedUntil > Date.now();
  }

  /** Whether it holds memory now or is about to: loaded, loading or starting. */
  get resident(): boolean {
    return this.loaded !== undefined || this.#loading !== undefined;
  }

  /**
   * Its estimate in bytes (weight files plus one full context of KV, as fit.ts reckons), read once
   * from its files; undefined where they cannot be read before a load (a hub repo not downloaded).
   */
  estimateBytes(): Promise<number | undefined> {
    this.#size ??= (isHubId(this.entry.source) ? Promise.resolve(undefined) : estimateFit(this.backend, this.entry.source, this.entry))
      .then((e) => (e ? e.weightsBytes + e.kvBytes : undefined))
      .catch(() => undefined)
      .then((b) => (this.sizeBytes = b));
    return this.#size;
  }

  state(): ModelState {
    const { id, task, context_length, owned_by } = this.entry;
    return {
      id,
      task,
      class: this.entry.class,
      context_length,
      status: this.status,
      created: this.created,
      owned_by: owned_by ?? 'hearth',
      input_modalities: task === 'transcription' ? ['audio'] : this.loaded?.vision ? ['text', 'image'] : ['text'],
      ...(this.detail ? { detail: this.detail } : {}),
      ...(this.loaded && task === 'chat' ? { tool_syntax: this.loaded.codec.toolSyntax } : {}),
      ...(this.loaded?.thinks ? { reasoning: 'think' as const } : {}),
      ...(this.loaded?.workarounds ? { workarounds: [...this.loaded.workarounds] } : {}),
      ...(this.download && this.status !== 'ready' ? { download: this.download.map((d) => ({ ...d })) } : {}),
      expires_at: this.expiresAt === undefined ? null : Math.ceil(this.expiresAt / 1000),
      ...(this.sizeBytes !== undefined ? { size_mb: Math.round((this.sizeBytes / 2 ** 20) * 10) / 10 } : {}),
      in_flight: this.#active,
    };
  }

  /** Requests being served by an instance now. */
  inFlight(m: LoadedModel | undefined = this.loaded): number {
    if (!m) return 0;
    const s = m.scheduler?.stats();
    return (s ? s.waiting + s.running : 0) + (this.#embedding.get(m) ?? 0);
  }

  /** Counts an embedding (or score) call against the instance it runs on. */
  async embedding<T>(m: LoadedModel, fn: () => Promise<T>): Promise<T> {
    this.#embedding.set(m, (this.#embedding.get(m) ?? 0) + 1);
    try {
      return await fn();
    } finally {
      this.#embedding.set(m, this.#embedding.get(m)! - 1);
    }
  }

  /**
   * Loads a fresh instance of `entry` (default: the current one). Meanwhile the status is
   * `redeploying` and new requests are refused; requests already running finish on the old
   * instance, which is released once they have. If the new instance fails to load, the
   * old one (if there was one) goes on serving and `detail` says why the redeploy failed.
   */
  redeploy(entry: CatalogEntry = this.entry): Promise<void> {
    const previous = this.ready;
    const run = (async () => {
      await previous; // one load at a time
      const old = this.loaded;
      this.status = old ? 'redeploying' : 'starting';
      this.detail = undefined;
      let fresh: LoadedModel;
      try {
        fresh = await this.#load(entry);
      } catch (e) {
        const why = e instanceof Error ? e.message : String(e);
        if (old) {
          this.status = 'ready';
          this.detail = `redeploy failed, still serving the previous instance: ${why}`;
        } else {
          this.status = 'failed';
          this.detail = why;
        }
        return;
      }
      if (old) {
        await this.#drain(old, REDEPLOY_DRAIN_MS);
        // Whatever still runs after the deadline is cut, so a stuck stream cannot hold a redeploy forever.
        old.scheduler?.abortAll(new EngineError('model_not_ready', `${entry.id} was redeployed while this request ran; retry`, null, 1));
      }
      if (this.#removed) return void this.#release(fresh);
      if (entry !== this.entry) this.#size = undefined;
      this.entry = entry;
      this.loaded = fresh;
      this.status = 'ready';
      this.detail = undefined;
      this.download = undefined;
      if (old) await this.#release(old);
    })();
    this.ready = run;
    return run;
  }

  /** Waits for the requests in flight (up to `deadlineMs`), then releases the sessions. */
  async remove(deadlineMs = 60_000): Promise<void> {
    this.#removed = true;
    await this.ready;
    const m = this.loaded;
    this.loaded = undefined;
    if (!m) return;
    await this.#drain(m, deadlineMs);
    m.scheduler?.abortAll(new EngineError('model_not_found', `${this.entry.id} was removed while this request ran`));
    await this.#release(m);
  }

  async dispose(): Promise<void> {
    this.#removed = true;
    await this.ready;
    const m = this.loaded;
    this.loaded = undefined;
    if (m) await this.#release(m);
  }

  async #drain(m: LoadedModel, deadlineMs = Infinity, alsoBusy: () => boolean = () => false): Promise<void> {
    const end = Date.now() + deadlineMs;
    while ((this.inFlight(m) > 0 || alsoBusy()) && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  }

  async #release(m: LoadedModel): Promise<void> {
    m.scheduler?.clearPrefixCache(); // its KV arrays go now, not whenever the scheduler is collected
    await m.lm?.dispose().catch(() => undefined);
    await m.drafter?.lm.dispose().catch(() => undefined);
    await m.vision?.dispose().catch(() => undefined);
    await m.speech?.dispose().catch(() => undefined);
    await m.encoder?.dispose().catch(() => undefined);
    await m.scorer?.dispose().catch(() => undefined);
    await releaseGrammars(m.codec).catch(() => undefined); // structured outputs
  }

  async #checkFit(folder: string, entry: CatalogEntry): Promise<void> {
    const estimate = await estimateFit(this.backend, folder, entry);
    if (estimate && this.backend.budget) checkFit(entry.id, estimate, await this.backend.budget());
  }

  /** A hub model that cannot fit is refused from its listed sizes, before gigabytes are downloaded. */
  async #checkFitBeforeDownload(entry: CatalogEntry): Promise<void> {
    if (!this.opts.hub?.plan || !this.backend.budget) return;
    this.detail = `checking the sizes of ${entry.source}`;
    const device = this.backend.device;
    const plan = await this.opts.hub.plan(entry, device);
    const weights = plan.files.filter((f) => f.file.startsWith('onnx/'));
    const bytes = weights.reduce((n, f) => n + f.bytes, 0);
    const estimate = estimateFromSizes(entry, dtypeFor(entry, device), bytes, (plan.config ?? {}) as KvConfig);
    try {
      checkFit(entry.id, estimate, await this.backend.budget());
    } catch (e) {
      const listed = weights.map((f) => `${f.file} ${size(f.bytes)}`).join(', ');
      throw new Error(`${(e as Error).message}; nothing was downloaded (${entry.source}: ${listed})`);
    }
  }

  /** A cross-encoder, run once on an empty pair: a graph that loads but cannot run fails here, not on every request. */
  async #loadCrossEncoder(folder: string, entry: CatalogEntry, codec: TextCodec): Promise<LoadedModel> {
    const pairs = new PairEncoder(codec.tokenizer, pairLength(entry, codec));
    const scorer = await CrossEncoder.load(this.backend, folder, entry, codec.tokenizer.pad_token_id ?? 0);
    try {
      await scorer.score([pairs.encode('', '')]);
    } catch (e) {
      await scorer.dispose().catch(() => undefined);
      throw new Error(`${entry.id}: the warm-up run failed, so the graph cannot be served: ${e instanceof Error ? e.message : String(e)}`);
    }
    return { codec, scorer, pairs };
  }

  async #load(entry: CatalogEntry): Promise<LoadedModel> {
    let folder = entry.source;
    if (isHubId(folder)) {
      if (!this.opts.hub) {
        throw new Error(`${entry.id}: ${folder} is a hub repo id, and this engine loads local folders only`);
      }
      await this.#checkFitBeforeDownload(entry);
      this.detail = `downloading ${folder}`;
      this.download = [];
      folder = await this.opts.hub.fetch(entry, this.backend.device, (p) => {
        const list = (this.download ??= []);
        const i = list.findIndex((d) => d.file === p.file);
        if (i === -1) list.push({ ...p });
        else list[i] = { ...p };
        const loaded = list.reduce((n, d) => n + d.loaded, 0);
        const total = list.reduce((n, d) => n + d.total, 0);
        this.detail = `downloading ${folder}: ${megabytes(loaded)}${total ? ` of ${megabytes(total)}` : ''}`;
      });
      this.detail = 'loading';
    } else if (!(await this.backend.exists(folder))) {
      throw new Error(`${entry.id}: model folder ${folder} does not exist (run \`npm run models\` for the fixtures)`);
    }
    const info = await validateCheckpoint(this.backend, folder, { entry, device: this.backend.device });
    const codec = await TextCodec.load(folder, { localOnly: true, files: this.backend });
    await this.#checkFit(folder, entry);
    if (entry.task === 'embedding') {
      const encoder = isDecoderType(info.model_type)
        ? await DecoderEmbedder.load(this.backend, folder, entry, codec.tokenizer.pad_token_id ?? 0)
        : await Encoder.load(this.backend, folder, entry);
      return { codec, encoder };
    }
    if (entry.task === 'rerank') return this.#loadCrossEncoder(folder, entry, codec);
    if (entry.task === 'transcription') return { codec, speech: await SpeechModel.load(this.backend, folder, entry, codec) };
    const lm = await CausalLM.load(this.backend, folder, entry, { headTopK: this.opts.headTopK });
    try {
      await lm.warmUp();
    } catch (e) {
      await lm.dispose().catch(() => undefined);
      throw new Error(`${entry.id}: the warm-up step failed, so the graph cannot be served: ${e instanceof Error ? e.message : String(e)}`);
    }
    let vision: VisionModel | undefined;
    if (isVisionType(info.model_type)) {
      vision = await VisionModel.load(this.backend, folder, entry).catch(async (e: unknown) => {
        await lm.dispose().catch(() => undefined);
        throw e;
      });
      // Its template reads each message's content as parts (images among them).
      codec.readsParts = true;
    }
    const mb = this.opts.kvCacheMb ?? DEFAULT_KV_CACHE_MB;
    const prefixCache = mb > 0 ? new PrefixCache(lm.kvShape, mb * 2 ** 20) : undefined;
    const thinks = entry.reasoning ? entry.reasoning === 'think' : codec.writesThinking;
    // Where the adapter's self-check finds fused attention wrong for rows of different lengths,
    // or for long chunks: one row a run or short chunks, slower, never wrong.
    const fused = lm.io.padding === 'right';
    const check = fused ? await this.backend.fusedAttentionWorkarounds?.() : undefined;
    const maxBatch = check?.oneRowPerRun ? 1 : undefined;
    const prefillChunk = check?.maxNewTokens;
    const speculative = entry.speculative ?? this.opts.speculative ?? (entry.draft ? 'draft' : DEFAULT_SPECULATIVE);
    let drafter: DraftModel | undefined;
    try {
      drafter = speculative === 'draft' && entry.draft ? await this.#loadDrafter(entry, entry.draft, lm, codec) : undefined;
    } catch (e) {
      await lm.dispose().catch(() => undefined);
      await vision?.dispose().catch(() => undefined);
      throw e;
    }
    const scheduler = new Scheduler(lm, { prefixCache, maxBatch, prefillChunk, wholeRows: this.opts.sampleFrom === 'whole-rows', speculative, drafter });
    return { codec, lm, scheduler, thinks, drafter, vision, workarounds: check?.applied.length ? check.applied : undefined };
  }

  /** The draft model a catalog entry names: another text entry's files, loaded beside the target, whose tokenizer must be the target's. */
  async #loadDrafter(entry: CatalogEntry, id: string, target: CausalLM, codec: TextCodec): Promise<DraftModel> {
    const draft = this.opts.entryOf?.(id);
    if (!draft || (draft.task !== 'chat' && draft.task !== 'completion') || draft.upstream) {
      throw new Error(`${entry.id}: its draft model ${id} is not a local text model of the catalog`);
    }
    let folder = draft.source;
    if (isHubId(folder)) {
      if (!this.opts.hub) throw new Error(`${entry.id}: its draft model ${id} is a hub repo, and this runtime downloads none`);
      folder = await this.opts.hub.fetch(draft, this.backend.device, () => undefined);
    }
    const draftCodec = await TextCodec.load(folder, { localOnly: true, files: this.backend });
    const probe = 'Speculative decoding: the draft and the target share one tokenizer, 123 ünïcode ✓';
    if (draftCodec.encodeText(probe).join() !== codec.encodeText(probe).join()) {
      throw new Error(`${entry.id}: its draft model ${id} has another tokenizer (the same text encodes to other tokens)`);
    }
    return new DraftModel(await CausalLM.load(this.backend, folder, draft, { headTopK: this.opts.headTopK }), target.vocabSize);
  }
}

/** The longest pair a cross-encoder takes: its context, or less where its tokenizer says so (bge-reranker: 512 of 514 positions). */
export function pairLength(entry: CatalogEntry, codec: TextCodec): number {
  const tokenizerMax = codec.tokenizer.model_max_length;
  return Number.isFinite(tokenizerMax) && tokenizerMax > 0 ? Math.min(entry.context_length, tokenizerMax) : entry.context_length;
}

/** How long a redeploy lets the old instance's requests finish before cutting them. */
export const REDEPLOY_DRAIN_MS = 5 * 60_000;

const megabytes = (n: number) => `${(n / 1e6).toFixed(1)} MB`;
