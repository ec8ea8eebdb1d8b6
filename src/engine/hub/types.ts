// How the engine gets a hub model's files onto the machine. The engine is
// runtime-agnostic, so the fetcher is handed in by the front door's worker:
// Node downloads into the data dir (src/engine/hub/node.ts); an engine without one
// serves local folders only.
import type { CatalogEntry, DownloadProgress } from '../protocol.js';

export interface HubFetcher {
  /**
   * Makes the files `entry` needs for `device` available locally and returns the folder
   * holding them (config.json, tokenizer files, onnx/...). Files already complete are not
   * fetched again. `onProgress` is called as bytes arrive.
   */
  fetch(entry: CatalogEntry, device: string, onProgress: (p: DownloadProgress) => void): Promise<string>;
  /**
   * The files `fetch` would bring for `device` with their sizes, and the repo's config.json,
   * read without downloading any weight: the engine checks the model fits before fetching it.
   */
  plan?(entry: CatalogEntry, device: string): Promise<HubPlan>;
}

export interface HubPlan {
  files: { file: string; bytes: number }[];
  config?: Record<string, unknown>;
}
