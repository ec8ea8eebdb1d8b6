// How an engine is set up: shared by engine.ts, which makes it, and model-host.ts, which loads its models.
import type { HubFetcher } from './hub/types.js';
import type { SpeculativeMode } from './spec/draft-policy.js';

export interface EngineOptions {
  /** Memory for each model's prefix cache, in MiB (default 256; 0 turns it off). */
  kvCacheMb?: number;
  /** Fetches hub-sourced models (Node: into the data dir); without it only local folders load. */
  hub?: HubFetcher;
  /**
   * How a step's logits reach the sampler (benchmarks compare them): 'candidates' (the
   * default: each row's best 64 from the sampling head, whole rows only where needed) or
   * 'whole-rows' (every row read whole, as before the head).
   */
  sampleFrom?: 'candidates' | 'whole-rows';
  /** The sampling head's top-K on the device: one TopK over the row, or by blocks (default: single on CPUs, blocked on GPUs). */
  headTopK?: 'single' | 'blocked';
  /** Speculative decoding for models whose catalog entry does not say: 'ngram' (the default: prompt lookup while one sequence runs) or 'off'. */
  speculative?: SpeculativeMode;
  /** The most pixels an image may have (default 50,000,000): more is a 413 before it is decoded. */
  maxImagePixels?: number;
  /** `eager` (default): every model loads when it is listed; `on-demand`: each is `unloaded` until a request (or an admin load) asks for it. */
  load?: LoadMode;
  /** How long an idle model stays loaded after its last request ended, in ms; -1 = forever (default: -1 eager, 5 minutes on demand). */
  keepAliveMs?: number;
  /** The most models loaded at once (default: no limit); a load past it first unloads the least recently used idle model. */
  maxLoadedModels?: number;
  /** The most MiB the loaded models' estimates may add up to (default: no limit); evicts as maxLoadedModels does. */
  memoryBudgetMb?: number;
  /** How long a request waits for its model to load (a slot to free included), in ms (default 120 s): then model_not_ready. */
  loadTimeoutMs?: number;
}

export type LoadMode = 'eager' | 'on-demand';

/** The options of on-demand loading alone (what a front door passes on to its engine's worker). */
export type ResidencyOptions = Pick<EngineOptions, 'load' | 'keepAliveMs' | 'maxLoadedModels' | 'memoryBudgetMb' | 'loadTimeoutMs'>;

/** The residency options alone, as plain data (structured-clone friendly, for a worker). */
export function residencyOf(o: ResidencyOptions): ResidencyOptions {
  const { load, keepAliveMs, maxLoadedModels, memoryBudgetMb, loadTimeoutMs } = o;
  return { load, keepAliveMs, maxLoadedModels, memoryBudgetMb, loadTimeoutMs };
}

/** Ollama's default keep-alive, which on-demand loading takes when none is given. */
export const ON_DEMAND_KEEP_ALIVE_MS = 5 * 60_000;
export const DEFAULT_LOAD_TIMEOUT_MS = 120_000;

/** The server's keep-alive as the options say, with the default of their load mode. */
export function keepAliveOf(o: EngineOptions): number {
  return o.keepAliveMs ?? (o.load === 'on-demand' ? ON_DEMAND_KEEP_ALIVE_MS : -1);
}
