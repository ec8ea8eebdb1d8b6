// The page's side of the engine: a dedicated Web Worker driven through comlink.
// Like the Node client, calls in flight when the worker dies fail with
// `engine_crashed`, and a fresh worker starts and loads the same models again.
// It also tracks load progress, which shows in models()' `detail` (and so in the
// 503 a request gets while its model is still loading).
import type { WorkerConfig, WorkerInfo, BrowserWorkerApi } from '../../../worker/browser.js';
import { hubFolder, type FileProgress } from '../../backends/web-cache.js';
import { isHubId } from '../catalog.js';
import { EngineError } from '../errors.js';
import type { CatalogEntry, EngineApi, ModelState } from '../protocol.js';
import { Comlink } from '../rpc.js';
import { forwardEngine, ServedModels, type WorkerCall } from './forward.js';

export type { WorkerConfig, WorkerInfo };

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
  /** Stops the worker. */
  terminate(): Promise<void>;
  /** Makes the worker throw an uncaught error (tests of crash recovery). */
  crashForTests(): Promise<void>;
  /** Resolves when a replacement worker is up after a crash (at once if none is pending). */
  restarted(): Promise<void>;
}

export interface BrowserEngineOptions {
  /** Creates the engine worker (a module worker running worker/browser.ts). */
  createWorker: () => Worker;
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
    worker: Worker;
    api: Comlink.Remote<BrowserWorkerApi>;
    info: WorkerInfo;
  }

  async function spawn(): Promise<Spawned> {
    const worker = opts.createWorker();
    const api = Comlink.wrap<BrowserWorkerApi>(worker);
    worker.addEventListener('error', (ev) => {
      ev.preventDefault();
      crashed(worker, ev.message || 'uncaught error');
    });
    worker.addEventListener('messageerror', () => crashed(worker, 'a message could not be read'));
    const info = await api.start(opts.config, Comlink.proxy(onFile));
    return { worker, api, info };
  }

  let current = await spawn();
  /** While a replacement worker starts after a crash: resolves to it. */
  let restarting: Promise<Spawned> | null = null;

  function crashed(worker: Worker, why: string) {
    if (closing || worker !== current.worker || restarting) return;
    worker.terminate();
    const crash = new EngineError('engine_crashed', `The engine worker stopped unexpectedly (${why}); it is being restarted`);
    for (const reject of pending) reject(crash);
    pending.clear();
    files.clear();
    restarting = (async () => {
      const next = await spawn();
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
      return states.map((m) => (m.status === 'starting' && !m.detail ? { ...m, detail: progressText(summary(m.id)) } : m));
    },
    crashForTests: () => call((api) => api.crashForTests()),
    restarted: async () => void (await restarting),
    async terminate() {
      await call((api) => api.dispose()).catch(() => undefined);
      closing = true;
      current.worker.terminate();
    },
  };
}

function progressText(s: { loaded: number; total: number; fraction: number }): string {
  if (!s.total) return 'loading';
  const mb = (n: number) => (n / 1e6).toFixed(n < 1e7 ? 2 : 0);
  return `loading ${Math.floor(s.fraction * 100)}% (${mb(s.loaded)} of ${mb(s.total)} MB)`;
}
