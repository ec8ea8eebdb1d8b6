// The engine's home in a browser tab: a dedicated module Web Worker, so inference
// never blocks the page. The page drives it through comlink (src/engine/client/browser.ts).
// Same engine as Node; the backend is onnxruntime-web (WebGPU or WASM).
import { env } from '@huggingface/transformers';
import { cachedFetch, hubFolder, setHubEndpoint, type FileProgress } from '../src/backends/web-cache.js';
import { detectWebDevice, defaultThreads, webBackend, type WebDevice } from '../src/backends/web.js';
import { createEngine } from '../src/engine/engine.js';
import { EngineError } from '../src/engine/errors.js';
import type { EngineApi } from '../src/engine/protocol.js';
import { Comlink, exposeEngine } from '../src/engine/rpc.js';

export interface WorkerConfig {
  /** `auto`: WebGPU when an adapter is granted, else WASM. */
  device: WebDevice | 'auto';
  /** Absolute URL prefix of onnxruntime-web's dist files. */
  wasmPaths: string;
  numThreads?: number;
  throttleMs?: number;
  /** Where hub repo ids are fetched from (default: transformers.js's `env.remoteHost`). */
  hubURL?: string;
}

export interface WorkerInfo {
  device: WebDevice;
  threads: number;
  crossOriginIsolated: boolean;
}

/** What this worker exposes: the engine, plus starting it and a crash switch for tests. */
export interface BrowserWorkerApi extends EngineApi {
  start(config: WorkerConfig, onProgress?: (p: FileProgress) => void): Promise<WorkerInfo>;
  /** Throws an uncaught error in the worker, as a fault in the runtime would. */
  crashForTests(): Promise<void>;
}

let engine: EngineApi | undefined;

function started(): EngineApi {
  if (!engine) throw new EngineError('model_not_ready', 'The engine has not started yet', 'model', 1);
  return engine;
}

const api: BrowserWorkerApi = {
  async start(config, onProgress) {
    if (engine) throw new Error('the engine worker is already started');
    const device = config.device === 'auto' ? await detectWebDevice() : config.device;
    const threads = device === 'wasm' ? (config.numThreads ?? defaultThreads()) : 1;
    const progress = onProgress ? (p: FileProgress) => void onProgress(p) : undefined;
    // transformers.js loads tokenizers only: from the app's own origin, through the cache.
    env.allowLocalModels = true;
    env.allowRemoteModels = false;
    env.useBrowserCache = false;
    env.fetch = cachedFetch({ onProgress: progress, throttleMs: config.throttleMs });
    const onnx = env.backends.onnx as { wasm?: { wasmPaths?: unknown } };
    if (onnx.wasm) onnx.wasm.wasmPaths = config.wasmPaths; // its own onnxruntime-web: never a CDN
    setHubEndpoint(config.hubURL ?? env.remoteHost);
    engine = createEngine(
      webBackend({ device, wasmPaths: config.wasmPaths, numThreads: threads, onProgress: progress, throttleMs: config.throttleMs }),
      // Hub files are fetched on demand from the hub into the Cache API, like any model file.
      { hub: { fetch: async (entry) => hubFolder(entry.source) } },
    );
    return { device, threads, crossOriginIsolated: self.crossOriginIsolated === true };
  },
  crashForTests: async () => {
    setTimeout(() => {
      throw new Error('hearth: engine worker crash requested for tests');
    });
  },
  load: (entries) => started().load(entries),
  models: async () => (engine ? engine.models() : []),
  generate: (req, onToken) => started().generate(req, onToken),
  cancel: async (id) => engine?.cancel(id),
  embed: (req) => started().embed(req),
  dispose: async () => engine?.dispose(),
  // Model operations: createEngine's engine has them all.
  add: (entry) => ops().add(entry),
  remove: (id) => ops().remove(id),
  redeploy: (id, entry) => ops().redeploy(id, entry),
  stats: () => ops().stats(),
};

function ops(): Required<EngineApi> {
  return started() as Required<EngineApi>;
}

exposeEngine(api, self as unknown as Comlink.Endpoint);
