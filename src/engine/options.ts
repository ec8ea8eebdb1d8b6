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
}
