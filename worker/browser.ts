// The engine's home in a browser: a SharedWorker where the browser has them, so every
// tab of the origin shares one engine and one copy of the weights, else a dedicated
// module Web Worker (one per tab). Either way inference never blocks a page, and each
// page drives the engine through comlink on its own port (src/engine/client/browser.ts).
// Same engine as Node; the backend is onnxruntime-web (WebGPU or WASM).
import { env } from '@huggingface/transformers';
import { absoluteURL, cachedFetch, hubFolder, onStorageFull, setHubEndpoint, sourceURL, type FileProgress } from '../src/backends/web-cache.js';
import { cachedBytes, evictFolder } from '../src/backends/web-storage.js';
import { detectWebDevice, defaultThreads, webBackend, webgpuDevice, type LosableDevice, type WebDevice } from '../src/backends/web.js';
import { createEngine } from '../src/engine/engine.js';
import { EngineError } from '../src/engine/errors.js';
import { isHubId } from '../src/engine/catalog.js';
import type { CatalogEntry, EngineApi } from '../src/engine/protocol.js';
import { Comlink, exposeEngine } from '../src/engine/rpc.js';
import type { BrowserWorkerApi, EngineHome, EngineKind, WorkerConfig, WorkerInfo } from '../src/engine/client/browser-worker.js';

export type { BrowserWorkerApi, EngineHome, EngineKind, WorkerConfig, WorkerInfo };

const kind: EngineKind = 'onconnect' in self ? 'shared' : 'dedicated';
/** `hearth-shared:<this worker's name>:<id>`: a new tab finds the live shared engine's name by it. */
const lifeLock = `hearth-${kind}:${self.name}:${crypto.randomUUID()}`;
let engine: EngineApi | undefined;
let info: WorkerInfo | undefined;
let pages = 0;
/** Every page that wants load progress (a model may still be loading when a second page joins). */
const progressListeners = new Set<(p: FileProgress) => void>();

/** Every catalog entry any page asked for, by id: where its files sit in the cache. */
const entries = new Map<string, CatalogEntry>();

/** The cache-key prefix of a model's files. */
function folderKey(entry: CatalogEntry): string {
  const folder = isHubId(entry.source) ? hubFolder(entry.source) : entry.source;
  return sourceURL(absoluteURL(folder.replace(/\/*$/, '/')));
}

function entry(id: string): CatalogEntry {
  const e = entries.get(id);
  if (!e) throw new EngineError('model_not_found', `The model \`${id}\` does not exist`, 'model');
  return e;
}

// A file that did not fit takes the files of its model already stored with it: no partial models.
onStorageFull(async (href) => {
  for (const e of entries.values()) if (href.startsWith(folderKey(e))) await evictFolder(folderKey(e));
});

function started(): EngineApi {
  if (!engine) throw new EngineError('model_not_ready', 'The engine has not started yet', 'model', 1);
  return engine;
}

// (device loss) ---------------------------------------------------------------
// A lost GPUDevice cannot be replaced under onnxruntime-web's sessions: the requests in
// flight end with device_lost, and the worker ends, so that its pages start a fresh
// one, which takes a new device and reloads the models from the Cache API.
let onWebGPU = false;
let gpu: LosableDevice | undefined;
let lostError: EngineError | undefined;
const onLost = new Set<(e: EngineError) => void>();

/** Watches the device once onnxruntime-web has one (after its first WebGPU session). */
async function watchDevice(): Promise<void> {
  if (gpu || !onWebGPU) return;
  const d = await webgpuDevice();
  if (!d || gpu) return;
  gpu = d;
  void d.lost.then((why) => {
    lostError = new EngineError(
      'device_lost',
      `The WebGPU device was lost (${why.reason || 'unknown'}${why.message ? `: ${why.message}` : ''}); ` +
        'the engine is taking a new device and reloading the model: retry shortly',
    );
    for (const fail of onLost) fail(lostError);
    setTimeout(() => self.close(), 100); // after the failures have been posted
  });
}

/** Runs `fn`, failing with device_lost if the device goes meanwhile (or went already, which a failed run reveals). */
async function unlessDeviceLost<T>(fn: () => Promise<T>): Promise<T> {
  await watchDevice();
  if (lostError) throw lostError;
  let fail: (e: EngineError) => void = () => undefined;
  const lost = new Promise<never>((_, reject) => (fail = reject));
  onLost.add(fail);
  try {
    return await Promise.race([fn(), lost]);
  } catch (e) {
    throw lostError ?? e;
  } finally {
    onLost.delete(fail);
  }
}

const DEV = (import.meta as { env?: { DEV?: boolean } }).env?.DEV === true;
// -----------------------------------------------------------------------------

async function startEngine(config: WorkerConfig): Promise<WorkerInfo> {
  const device = config.device === 'auto' ? await detectWebDevice() : config.device;
  const threads = device === 'wasm' ? (config.numThreads ?? defaultThreads()) : 1;
  const progress = (p: FileProgress) => {
    for (const l of progressListeners) l(p);
  };
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
    // An unloaded model's sessions (their GPU buffers) are released; a shared engine applies this for every tab.
    { hub: { fetch: async (entry) => hubFolder(entry.source) }, ...config.residency },
  );
  onWebGPU = device === 'webgpu';
  // Held until this worker ends: pages wait on it to learn that the engine is gone.
  await new Promise<void>((held) => void navigator.locks.request(lifeLock, () => (held(), new Promise(() => {}))));
  return { device, threads, crossOriginIsolated: self.crossOriginIsolated === true, kind, lifeLock };
}

let starting: Promise<WorkerInfo> | undefined;

/** One page's connection: the requests it made are its own, and end with it. */
function connection(): BrowserWorkerApi {
  const mine = new Set<string>();
  let joined = false;
  let progress: ((p: FileProgress) => void) | undefined;
  const leave = () => {
    if (!joined) return;
    joined = false;
    pages--;
    if (progress) progressListeners.delete(progress);
    for (const id of mine) void engine?.cancel(id);
  };
  return {
    async start(config, onProgress, pageLock) {
      if (joined) throw new Error('this page already started the engine');
      if (onProgress) {
        progress = (p) => void onProgress(p);
        progressListeners.add(progress);
      }
      info = await (starting ??= startEngine(config));
      // One hub endpoint per engine: a page that names one (a mirror) points the engine at it.
      if (config.hubURL) setHubEndpoint(config.hubURL);
      joined = true;
      pages++;
      // Granted once the page is gone (closed, navigated, crashed) or let it go.
      if (pageLock) void navigator.locks.request(pageLock, leave);
      return info;
    },
    home: async () => ({ kind, pages }),
    storedModels: async () => Promise.all([...entries.values()].map(async (e) => ({ id: e.id, bytes: await cachedBytes(folderKey(e)) }))),
    removeModel: async (id) => void (await evictFolder(folderKey(entry(id)))),
    crashForTests: async () => {
      setTimeout(() => {
        if (kind === 'shared') self.close(); // an uncaught error does not end a SharedWorker
        else throw new Error('hearth: engine worker crash requested for tests');
      });
    },
    loseDeviceForTests: async () => {
      await watchDevice();
      if (!DEV || !gpu) throw new Error('no WebGPU device to lose (or not a development build)');
      gpu.destroy();
    },
    load: (list) => {
      for (const e of list) entries.set(e.id, e);
      return started().load(list);
    },
    models: async () => (engine ? engine.models() : []),
    async generate(req, onToken) {
      mine.add(req.id);
      try {
        return await unlessDeviceLost(() => started().generate(req, onToken));
      } finally {
        mine.delete(req.id);
      }
    },
    cancel: async (id) => engine?.cancel(id),
    embed: (req) => unlessDeviceLost(() => started().embed(req)),
    score: (req) => unlessDeviceLost(() => started().score(req)),
    // A page's transcription is its own: it ends with the page, as its generations do.
    async transcribe(req, onDelta) {
      mine.add(req.id);
      try {
        return await unlessDeviceLost(() => ops().transcribe(req, onDelta));
      } finally {
        mine.delete(req.id);
      }
    },
    countTokens: (req) => ops().countTokens(req),
    tokenize: (req) => ops().tokenize(req),
    detokenize: (req) => ops().detokenize(req),
    // A shared engine outlives any one page: the browser ends it when its last page goes.
    dispose: async () => (kind === 'dedicated' ? engine?.dispose() : leave()),
    // Model operations: createEngine's engine has them all.
    add: (entry) => ops().add(entry),
    remove: (id) => ops().remove(id),
    redeploy: (id, entry) => ops().redeploy(id, entry),
    stats: () => ops().stats(),
    // Models on demand: a load waits for the model (a page's request loads it the same way).
    loadModel: (id) => unlessDeviceLost(() => ops().loadModel(id)),
    unloadModel: (id, opts) => ops().unloadModel(id, opts),
  };
}

function ops(): Required<EngineApi> {
  return started() as Required<EngineApi>;
}

if (kind === 'shared') {
  (self as unknown as { onconnect: (ev: MessageEvent) => void }).onconnect = (ev) => {
    exposeEngine(connection(), ev.ports[0] as unknown as Comlink.Endpoint);
  };
} else {
  exposeEngine(connection(), self as unknown as Comlink.Endpoint);
}
