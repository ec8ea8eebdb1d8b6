// What the browser's engine worker (worker/browser.ts) offers each page over comlink: its
// settings, what it reports, and its API. Here, below both, so that the page's client and
// the worker import the same types without the client reaching up into worker/.
import type { FileProgress } from '../../backends/web-cache.js';
import type { WebDevice } from '../../backends/web.js';
import type { EngineApi } from '../protocol.js';
import type { ResidencyOptions } from '../options.js';

export type EngineKind = 'shared' | 'dedicated';

export interface WorkerConfig {
  /** `auto`: WebGPU when an adapter is granted, else WASM. */
  device: WebDevice | 'auto';
  /** Absolute URL prefix of onnxruntime-web's dist files. */
  wasmPaths: string;
  numThreads?: number;
  throttleMs?: number;
  /** Where hub repo ids are fetched from (default: transformers.js's `env.remoteHost`). */
  hubURL?: string;
  /** When models load and unload (startHearth's load, keepAlive, maxLoadedModels); a shared engine takes the first page's. */
  residency?: ResidencyOptions;
}

export interface WorkerInfo {
  device: WebDevice;
  threads: number;
  crossOriginIsolated: boolean;
  kind: EngineKind;
  /** A Web Lock this worker holds while it lives: a page that is granted it knows the engine is gone. */
  lifeLock: string;
}

/** Where the engine lives and how many pages it serves now. */
export interface EngineHome {
  kind: EngineKind;
  pages: number;
}

/** What this worker exposes to each page: the engine, plus starting it and a crash switch for tests. */
export interface BrowserWorkerApi extends EngineApi {
  /** Starts the engine (the first page) or joins it (later pages: the config is ignored).
   * `pageLock`: a Web Lock the page holds while it lives; once it is free, the page's requests are cancelled. */
  start(config: WorkerConfig, onProgress?: (p: FileProgress) => void, pageLock?: string): Promise<WorkerInfo>;
  home(): Promise<EngineHome>;
  /** Bytes each model's files take in the Cache API. */
  storedModels(): Promise<{ id: string; bytes: number }[]>;
  /** Evicts a model's files from the Cache API (a loaded copy serves on until the engine restarts). */
  removeModel(id: string): Promise<void>;
  /** Ends the worker as a fault in the runtime would: an uncaught error (dedicated), or closing (shared). */
  crashForTests(): Promise<void>;
  /** Development builds only: destroys the WebGPU device the engine runs on, as a driver reset would. */
  loseDeviceForTests(): Promise<void>;
}
