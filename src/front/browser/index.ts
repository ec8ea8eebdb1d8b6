// hearth/browser: Hearth inside a browser tab. The engine runs on onnxruntime-web in a
// SharedWorker that every tab of the origin shares (a dedicated Web Worker where there
// are none); the page's own fetch('/v1/...') (an unmodified openai SDK included) is
// answered in the page, and MSW's service worker answers the rest, with the same
// router as the Node server.
import { setupWorker } from 'msw/browser';
import { createAccess } from '../../access/access.js';
import { generateKey, isWellFormedKey } from '../../access/keys.js';
import { createMemoryStore } from '../../access/memory-store.js';
import { fetchModelFile } from '../../backends/web-cache.js';
import type { WebDevice } from '../../backends/web.js';
import { parseCatalog } from '../../engine/catalog.js';
import { startBrowserEngine, type BrowserEngine, type LoadProgress } from '../../engine/client/browser.js';
import type { EngineKind } from '../../engine/client/browser-worker.js';
import type { CatalogEntry, ModelTask } from '../../engine/protocol.js';
import { parseKeepAlive } from '../../engine/keep-alive.js';
import { residencyOf, type ResidencyOptions } from '../../engine/options.js';
import { upstreamEntry } from '../../upstream/entry.js';
import { Upstreams, withUpstreams } from '../../upstream/registry.js';
import { createRuntime, modelsSettled } from '../../runtime.js';
import type { Runtime } from '../../types.js';
import { handlersFor } from '../msw/handlers.js';
import { answerPageFetch } from './page-fetch.js';
import { decodeWithWebAudio } from './web-audio.js';

export type { EngineKind, LoadProgress, WebDevice };
export { clearModelCache, MODEL_CACHE } from '../../backends/web-cache.js';

export interface StartHearthOptions {
  /** `auto` (default): WebGPU when the browser grants an adapter, else WASM. */
  device?: WebDevice | 'auto';
  /** The key the in-page runtime accepts (same rules as Node: `svc_live_` + ≥ 32 base62).
   * Default: a fresh random key, the only one accepted. */
  apiKey?: string;
  /** Where the API answers; default `${location.origin}/v1` (/generate and /health sit beside it). */
  baseURL?: string;
  /** Where the app serves `catalog.json` and the model folders it names (default `/models/`). */
  modelsURL?: string;
  /** Model ids to serve from that catalog (default: the fixtures svc/tiny-chat and svc/tiny-embed). */
  models?: string[];
  /** Or the catalog itself (sources are URLs or same-origin paths of model folders). */
  catalog?: CatalogEntry[];
  /** Where the app serves onnxruntime-web's dist files (.wasm and .mjs); default `/ort/`. */
  wasmPaths?: string;
  /** WASM threads (default: up to 4 when cross-origin isolated, else 1). */
  numThreads?: number;
  /** MSW's service worker script (`npx msw init <public dir>`); default `/mockServiceWorker.js`. */
  serviceWorkerURL?: string;
  /** `auto` (default): a SharedWorker where the browser has them (one engine for every tab), else a
   * dedicated worker. `dedicated`: this tab's own engine; in Chromium a SharedWorker is not
   * cross-origin isolated, so only a dedicated worker runs WASM on several threads. */
  engine?: EngineKind | 'auto';
  /** Starts or joins the engine worker of this name. Default: worker/browser.ts through the
   * bundler (Vite), as a SharedWorker where the browser has them, else as a dedicated Worker. */
  createWorker?: (name: string) => Worker | SharedWorker;
  /** Load progress, per model, as files arrive; a last event per model with `done`. */
  onProgress?: (p: LoadProgress) => void;
  /** Resolve only once every model is ready or failed (default true). With false it
   * resolves as soon as requests can be made; until a model is ready they get 503
   * `model_not_ready` with the load progress in the message. */
  waitForModels?: boolean;
  /** `eager` (default): every model loads at start; `on-demand`: each loads at its first request. */
  load?: 'eager' | 'on-demand';
  /** How long an idle model stays loaded after its last request: "30s", "5m", "1h", a number of
   * seconds, or -1 (forever; the default when eager, 5 minutes on demand). An unloaded model's
   * sessions and GPU buffers are destroyed; its files stay in the Cache API, so it reloads quickly. */
  keepAlive?: string | number;
  /** The most models loaded at once; a load past it unloads the least recently used idle one first. */
  maxLoadedModels?: number;
  /** Milliseconds between network chunks of model files: makes a load slow (tests). */
  throttleMs?: number;
  /** Catalog entries whose source is a hub repo id are fetched from here, file by file, into
   * the Cache API (default: transformers.js's `env.remoteHost`, the public hub; a mirror needs the
   * /{repo}/resolve/main/{file} layout). */
  hubURL?: string;
  /** Models the tab cannot run, forwarded to OpenAI-speaking servers (vLLM, another Hearth...)
   * through the same handlers: the page's key is checked here and never sent on; the
   * upstream gets its own `apiKey` from this config. The upstream must allow the page's
   * origin (CORS). */
  upstreams?: PageUpstream[];
}

export interface PageUpstream {
  id: string;
  /** Base URL(s) ending in the API root, e.g. "https://gpu.example/v1". */
  url: string | string[];
  /** The model name the upstream knows. */
  model: string;
  apiKey?: string;
  task?: ModelTask;
  context_length?: number;
  class?: string;
  price?: CatalogEntry['price'];
}

/** startHearth's load, keepAlive and maxLoadedModels as the engine's options (a bad keepAlive throws, naming it). */
function pageResidency(o: Pick<StartHearthOptions, 'load' | 'keepAlive' | 'maxLoadedModels'>): ResidencyOptions {
  let keepAliveMs: number | undefined;
  if (o.keepAlive !== undefined) {
    const ms = parseKeepAlive(o.keepAlive);
    if (ms === null) throw new TypeError(`startHearth: keepAlive takes "30s", "5m", "1h", a number of seconds or -1 (got ${JSON.stringify(o.keepAlive)})`);
    keepAliveMs = ms;
  }
  if (o.maxLoadedModels !== undefined && !(Number.isInteger(o.maxLoadedModels) && o.maxLoadedModels >= 1)) {
    throw new TypeError(`startHearth: maxLoadedModels must be an integer ≥ 1 (got ${o.maxLoadedModels})`);
  }
  return residencyOf({ load: o.load, keepAliveMs, maxLoadedModels: o.maxLoadedModels });
}

/** Upstream entries, and where their keys are found (config, not an environment). */
function pageUpstreams(list: PageUpstream[]) {
  const keys = new Map<string, string>();
  const entries = list.map((u, i) => {
    const env = `page_upstream_${i}`;
    if (u.apiKey) keys.set(env, u.apiKey);
    const upstream = { urls: [u.url].flat(), model: u.model, ...(u.apiKey ? { api_key_env: env } : {}) };
    return upstreamEntry({ ...u, upstream });
  });
  return { entries, upstreams: new Upstreams({ env: (name) => keys.get(name) }) };
}

export interface Hearth {
  /** Absolute: `http://host:port/v1`. */
  baseURL: string;
  apiKey: string;
  device: WebDevice;
  /** `shared`: one engine in a SharedWorker serves every tab of the origin; `dedicated`: this tab's own worker. */
  engine: EngineKind;
  /** Model ids served. */
  models: string[];
  /** WASM threads in use (1 on WebGPU). */
  threads: number;
  /** Resolves once every model is ready or failed. */
  ready: Promise<void>;
  /** The origin's storage (navigator.storage.estimate()), whether it is persistent, and what each model's files take. */
  storage(): Promise<StorageReport>;
  /** Evicts a model's files from the Cache API; a loaded copy serves on until the engine restarts, then it downloads again. */
  removeModel(id: string): Promise<void>;
  runtime: Runtime;
  /** Stops answering requests and leaves the engine (a shared one goes on for the other tabs). */
  stop(): Promise<void>;
  /** Makes the engine worker throw an uncaught error; calls in flight fail, and the next one gets a fresh worker. */
  __crashWorkerForTests(): Promise<void>;
  /** Development builds only (`import.meta.env.DEV`): destroys the WebGPU device the engine runs on. */
  __loseDeviceForTests?(): Promise<void>;
}

export interface StorageReport {
  usage: number;
  quota: number;
  persisted: boolean;
  models: { id: string; bytes: number }[];
}

export const DEFAULT_MODELS = ['svc/tiny-chat', 'svc/tiny-embed'];

export async function startHearth(options: StartHearthOptions = {}): Promise<Hearth> {
  const origin = location.origin;
  const baseURL = new URL(options.baseURL ?? '/v1', origin).href.replace(/\/+$/, '');
  const apiKey = options.apiKey ?? generateKey();
  if (!isWellFormedKey(apiKey)) {
    throw new Error('apiKey must be "svc_live_" followed by 32 to 128 letters and digits');
  }
  const catalog = options.catalog ?? (await browserCatalog(options.modelsURL ?? '/models/', options.models ?? DEFAULT_MODELS));

  // Weights are large: ask that the browser not evict them under storage pressure.
  void navigator.storage?.persist?.().catch(() => false);

  const access = createAccess({ store: createMemoryStore() });
  await access.addKey(apiKey, { name: 'page' });

  const last = new Map<string, LoadProgress>();
  const onProgress = (p: LoadProgress) => {
    last.set(p.model, p);
    options.onProgress?.(p);
  };
  const engine: BrowserEngine = await startBrowserEngine({
    createWorker: options.createWorker ?? ((name) => defaultWorker(name, options.engine !== 'dedicated')),
    config: {
      device: options.device ?? 'auto',
      wasmPaths: new URL(options.wasmPaths ?? '/ort/', origin).href,
      numThreads: options.numThreads,
      throttleMs: options.throttleMs,
      hubURL: options.hubURL,
      residency: pageResidency(options),
    },
    onProgress,
  });
  const remote = pageUpstreams(options.upstreams ?? []);
  const served = [...catalog, ...remote.entries];
  const runtime: Runtime = {
    ...createRuntime({ engine: withUpstreams(engine, remote.upstreams), access, catalog: served }),
    upstreams: remote.upstreams,
    engineHome: () => engine.home(),
  };
  const ready = modelsSettled(engine, 100).then(async () => {
    for (const m of await engine.models()) {
      const p = last.get(m.id);
      options.onProgress?.({
        model: m.id,
        file: '',
        loaded: p?.loaded ?? 0,
        total: p?.total ?? 0,
        fraction: m.status === 'ready' ? 1 : (p?.fraction ?? 0),
        fromCache: p?.fromCache ?? false,
        done: true,
      });
    }
  });

  // A chat's image_url may name the page's own pictures: a blob: URL or a same-origin path.
  // Audio uploads are decoded on the page thread, where Web Audio is (workers have none).
  const handlers = handlersFor(runtime, baseURL, { imageUrls: { pageOrigin: location.origin }, decodeAudio: decodeWithWebAudio });
  const msw = setupWorker(...handlers);
  // msw 2 reads onUnhandledRequest, msw 3 onUnhandledFrame: the app's msw ignores the other.
  const start = {
    serviceWorker: { url: options.serviceWorkerURL ?? '/mockServiceWorker.js' },
    onUnhandledRequest: 'bypass',
    onUnhandledFrame: 'bypass',
    quiet: true,
  };
  await msw.start(start as Parameters<typeof msw.start>[0]);
  const restoreFetch = answerPageFetch(handlers);
  if (options.waitForModels !== false) await ready;

  return {
    baseURL,
    apiKey,
    device: engine.info.device,
    engine: engine.info.kind,
    threads: engine.info.threads,
    models: served.map((e) => e.id),
    ready,
    runtime,
    async storage() {
      const [estimate, persisted, models] = await Promise.all([
        navigator.storage.estimate(),
        navigator.storage.persisted(),
        engine.storedModels(),
      ]);
      return { usage: estimate.usage ?? 0, quota: estimate.quota ?? 0, persisted, models };
    },
    removeModel: (id) => engine.removeModel(id),
    async stop() {
      restoreFetch();
      msw.stop();
      await runtime.close();
    },
    async __crashWorkerForTests() {
      await engine.crashForTests();
    },
    ...((import.meta as { env?: { DEV?: boolean } }).env?.DEV && { __loseDeviceForTests: () => engine.loseDeviceForTests() }),
  };
}

function defaultWorker(name: string, shared: boolean): Worker | SharedWorker {
  // Both spelled out in full: bundlers find worker entry points by this exact shape.
  if (shared && typeof SharedWorker === 'function') {
    return new SharedWorker(new URL('../../../worker/browser.js', import.meta.url), { type: 'module', name });
  }
  return new Worker(new URL('../../../worker/browser.js', import.meta.url), { type: 'module', name });
}

/** The catalog the app serves at `modelsURL` (cached like the weights), narrowed to `ids` (all of it without). */
export async function browserCatalog(modelsURL: string, ids?: string[]): Promise<CatalogEntry[]> {
  const url = new URL('catalog.json', new URL(modelsURL.replace(/\/*$/, '/'), location.href));
  const text = new TextDecoder().decode(await fetchModelFile(url));
  // transformers.js loads same-origin paths as local files; keep sources as paths.
  const entries = parseCatalog(text, (source) => {
    const u = new URL(source, url);
    return u.origin === location.origin ? u.pathname : u.href;
  });
  if (!ids) return entries;
  const missing = ids.filter((id) => !entries.some((e) => e.id === id));
  if (missing.length) throw new Error(`Not in ${url.href}: ${missing.join(', ')}`);
  return ids.map((id) => entries.find((e) => e.id === id)!);
}
