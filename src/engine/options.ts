// How an engine is set up: shared by engine.ts, which makes it, and model-host.ts, which loads its models.
import type { HubFetcher } from './hub/types.js';

export interface EngineOptions {
  /** Memory for each model's prefix cache, in MiB (default 256; 0 turns it off). */
  kvCacheMb?: number;
  /** Fetches hub-sourced models (Node: into the data dir); without it only local folders load. */
  hub?: HubFetcher;
}
