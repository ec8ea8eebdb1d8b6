// The page's side of the engine: a SharedWorker (one engine for every tab of the
// origin) or a dedicated Web Worker, driven through comlink on this page's port.
// Like the Node client, calls in flight when the worker dies fail with
// `engine_crashed`, and a fresh worker starts and loads the same models again.
// It also tracks load progress, which shows in models()' `detail` (and so in the
// 503 a request gets while its model is still loading).
import type { BrowserWorkerApi, EngineHome, WorkerConfig, WorkerInfo } from './browser-worker.js';
import { hubFolder, type FileProgress } from '../../backends/web-cache.js';
import { isHubId } from '../catalog.js';
import { EngineError } from '../errors.js';
import type { CatalogEntry, EngineApi, ModelState } from '../protocol.js';
import { Comlink } from '../rpc.js';
import { forwardEngine, ServedModels, type WorkerCall } from './forward.js';

export type { EngineHome, WorkerConfig, WorkerInfo };

/** A model's load progress, as events report it. */
export interface LoadProgress {
  model: string;
  /** The file being fetched (absolute URL). */
  file: string;
  /** Bytes in, over every file of the model seen so far. */
  loaded: number;
  total: number;
  /** 0..1, or NaN when sizes are unknown. */
  fraction: number;
  fromCache: boolean;
  /** The model is ready (or failed); no more events for it. */
  done: boolean;
}

export interface BrowserEngine extends EngineApi {
  readonly info: WorkerInfo;
  /** Where the engine runs and how many pages share it. */
  home(): Promise<EngineHome>;
  /** Bytes each model's files take in the Cache API. */
  storedModels(): Promise<{ id: string; bytes: number }[]>;
  /** Evicts a model's files from the Cache API. */
  removeModel(id: string): Promise<void>;
  /** Leaves the engine: ends a dedicated worker; a shared one goes on serving other pages. */
  terminate(): Promise<void>;
  /** Makes the worker throw an uncaught error (tests of crash recovery). */
  crashForTests(): Promise<void>;
  /** Development builds: destroys the engine's WebGPU device (tests of device loss). */
  loseDeviceForTests(): Promise<void>;
  /** Resolves when a replacement worker is up after a crash (at once if none is pending). */
  restarted(): Promise<void>;
}

export interface BrowserEngineOptions {
  /** Creates or joins the engine worker (worker/browser.ts as a module SharedWorker or Worker) of this name. */
  createWorker: (name: string) => Worker | SharedWorker;
  config: WorkerConfig;
  onProgress?: (p: LoadProgress) => void;
  /** Called after a crash, once the replacement worker has started. */
  onRestart?: (error: Error) => void;
}

export async function startBrowserEngine(opts: BrowserEngineOptions): Promise<BrowserEngine> {
  const served = new ServedModels();
  let closing = false;
  const pending = new Set<(e: Error) => void>();
  /** Per model: per file URL, bytes in and size. */
  const files = new Map<string, Map<string, { loaded: number; total: number; fromCache: boolean }>>();

  function modelOf(url: string): CatalogEntry | undefined {
    const path = new URL(url).pathname;
    return served.entries.find((e) => {
      const folder = isHubId(e.source) ? hubFolder(e.source) : e.source;
      return path.startsWith(new URL(folder.replace(/\/*$/, '/'), url).pathname);
    });
  }

  function onFile(p: FileProgress) {
    const entry = modelOf(p.url);
    if (!entry) return;
    const perFile = files.get(entry.id) ?? new Map();
    files.set(entry.id, perFile);
    // A file read again (from the cache) after it came over the network still counts as network.
    const fromCache = (perFile.get(p.url)?.fromCache ?? true) && p.fromCache;
    perFile.set(p.url, { loaded: p.loaded, total: p.total || p.loaded, fromCache });
    const sum = summary(entry.id);
    opts.onProgress?.({ model: entry.id, file: p.url, ...sum, done: false });
  }

  function summary(id: string) {
    let loaded = 0;
    let total = 0;
    let fromCache = true;
    for (const f of files.get(id)?.values() ?? []) {
      loaded += f.loaded;
      total += f.total;
      fromCache &&= f.fromCache;
    }
    return { loaded, total, fraction: total ? loaded / total : NaN, fromCache };
  }

  interface Spawned {
    worker: Worker | SharedWorker;
    api: Comlink.Remote<BrowserWorkerApi>;
    info: WorkerInfo;
    /** Ends a dedicated worker; closes this page's port to a shared one. */
    leave(): void;
  }

  // Held while this page lives: the engine cancels the page's requests once it is free.
  const pageLock = await holdLock(`hearth-page-${crypto.randomUUID()}`);

  async function spawn(name: string): Promise<Spawned> {
    const worker = opts.createWorker(name);
    const port = 'port' in worker ? worker.port : worker;
    const api = Comlink.wrap<BrowserWorkerApi>(port);
    const leave = () => ('port' in worker ? worker.port.close() : worker.terminate());
    worker.addEventListener('error', (ev) => {
      ev.preventDefault();
      crashed(worker, (ev as ErrorEvent).message || 'uncaught error');
    });
    port.addEventListener('messageerror', () => crashed(worker, 'a message could not be read'));
    const info = await api.start(opts.config, Comlink.proxy(onFile), pageLock.name);
    // Granted once the worker is gone, however it ended (a SharedWorker's faults fire no event here).
    void navigator.locks.request(info.lifeLock, () => crashed(worker, 'the worker ended'));
    return { worker, api, info, leave };
  }

  let current = await spawn(await liveEngineName());
  /** While a replacement worker starts after a crash: resolves to it. */
  let restarting: Promise<Spawned> | null = null;

  function crashed(worker: Worker | SharedWorker, why: string) {
    if (closing || worker !== current.worker || restarting) return;
    current.leave();
    const crash = new EngineError('engine_crashed', `The engine worker stopped unexpectedly (${why}); it is being restarted`);
    for (const reject of pending) reject(crash);
    pending.clear();
    files.clear();
    restarting = (async () => {
      // A name of its own: a SharedWorker that is still closing would answer to the old one.
      const next = await spawn(successorName(current.info.lifeLock));
      if (served.entries.length) await next.api.load(served.entries);
      // Calls made meanwhile wait for the models to be back (from the cache: quick)
      // rather than get 503s.
      while ((await next.api.models()).some((m) => m.status === 'starting')) {
        await new Promise((r) => setTimeout(r, 50));
      }
      current = next;
      restarting = null;
      opts.onRestart?.(crash);
      return next;
    })();
  }

  /** Runs a call on the live worker (waiting for a replacement after a crash); fails it if the worker dies meanwhile. */
  function call<T>(fn: (api: Comlink.Remote<BrowserWorkerApi>) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const run = (s: Spawned) => {
        pending.add(reject);
        fn(s.api)
          .then(resolve, reject)
          .finally(() => pending.delete(reject));
      };
      if (restarting) restarting.then(run, reject);
      else run(current);
    });
  }

  return {
    get info() {
      return current.info;
    },
    ...forwardEngine(call as WorkerCall, served),
    models: async () => {
      const states: ModelState[] = await call((api) => api.models());
      return states.map((m) => ((m.status === 'starting' || m.status === 'loading') && !m.detail ? { ...m, detail: progressText(summary(m.id)) } : m));
    },
    home: () => call((api) => api.home()),
    storedModels: () => call((api) => api.storedModels()),
    removeModel: (id) => call((api) => api.removeModel(id)),
    crashForTests: () => call((api) => api.crashForTests()),
    loseDeviceForTests: () => call((api) => api.loseDeviceForTests()),
    restarted: async () => void (await restarting),
    async terminate() {
      await call((api) => api.dispose()).catch(() => undefined);
      closing = true;
      current.leave();
      pageLock.release();
    },
  };
}

function progressText(s: { loaded: number; total: number; fraction: number }): string {
  if (!s.total) return 'loading';
  const mb = (n: number) => (n / 1e6).toFixed(n < 1e7 ? 2 : 0);
  return `loading ${Math.floor(s.fraction * 100)}% (${mb(s.loaded)} of ${mb(s.total)} MB)`;
}

/** The name of the shared engine that lives now (tabs that restarted it after a crash renamed it), or the first name. */
async function liveEngineName(): Promise<string> {
  const { held = [] } = await navigator.locks.query();
  const live = held.map((l) => l.name?.split(':') ?? []).find((parts) => parts[0] === 'hearth-shared');
  return live?.[1] ?? 'hearth-engine';
}

/** Every tab that saw the same engine die names its successor alike, so they all join one. */
function successorName(deadLifeLock: string): string {
  return `hearth-engine-${deadLifeLock.split(':').at(-1)}`;
}

/** Takes a Web Lock and holds it until `release()`. */
async function holdLock(name: string): Promise<{ name: string; release: () => void }> {
  let release: () => void = () => undefined;
  await new Promise<void>((granted) => {
    void navigator.locks.request(name, () => {
      granted();
      return new Promise<void>((r) => (release = r));
    });
  });
  return { name, release: () => release() };
}
