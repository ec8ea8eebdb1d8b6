// Model files in the browser: fetched from the app's own origin once, kept in the
// Cache API, read from there on every later load (so a reloaded tab starts with the
// network blocked). Works in pages and in workers; no DOM, no node: imports.
import { ensureRoom, isQuotaExceeded, StorageFullError } from './web-quota.js';

/** Name of the Cache API bucket that holds model files. */
export const MODEL_CACHE = 'hearth-models-v1';

export interface FileProgress {
  /** Absolute URL of the file. */
  url: string;
  loaded: number;
  /** 0 when the server did not say. */
  total: number;
  /** True once the whole file is in. */
  done: boolean;
  fromCache: boolean;
}

export interface CachedFetchOptions {
  /** Called as bytes arrive (at most a few times a second per file, plus once at the end). */
  onProgress?: (p: FileProgress) => void;
  /** Skip the Cache API (no cache in this context, or the caller wants fresh files). */
  noCache?: boolean;
  /** Milliseconds to wait between chunks read from the network (tests use it to make a load slow). */
  throttleMs?: number;
}

function base(): string {
  const loc = (globalThis as { location?: { href: string } }).location;
  return loc?.href ?? 'http://localhost/';
}

export function absoluteURL(url: string | URL): string {
  return new URL(String(url), base()).href;
}

/** Hub repos' folders appear to the engine (and transformers.js) as same-origin paths under this prefix. */
export const HUB_PREFIX = '/_hearth/hub/';
/** Set by the worker from its options or transformers.js's `env.remoteHost`. */
let hubEndpoint = '';

/** Where hub files come from (the hub, or a mirror with the same /{repo}/resolve/main/{file} layout). */
export function setHubEndpoint(url: string): void {
  hubEndpoint = new URL(url, base()).href.replace(/\/+$/, '');
}

/** The folder path standing for a hub repo id. */
export function hubFolder(repo: string): string {
  return `${HUB_PREFIX}${repo}`;
}

/** The real URL of a file (its key in the cache): hub folder paths map to `${endpoint}/${org}/${name}/resolve/main/${file}`. */
export function sourceURL(href: string): string {
  const u = new URL(href);
  if (u.origin !== new URL(base()).origin || !u.pathname.startsWith(HUB_PREFIX)) return href;
  const [org, name, ...file] = u.pathname.slice(HUB_PREFIX.length).split('/');
  return `${hubEndpoint}/${org}/${name}/resolve/main/${file.join('/')}`;
}

async function openCache(noCache?: boolean): Promise<Cache | undefined> {
  if (noCache || typeof caches === 'undefined') return undefined;
  try {
    return await caches.open(MODEL_CACHE);
  } catch {
    return undefined; // opaque origins and some private modes refuse
  }
}

/**
 * The bytes of a model file: from the cache when it is there, else from the network
 * (then stored). Throws with the URL and status when the file cannot be had.
 */
export async function fetchModelFile(url: string | URL, opts: CachedFetchOptions = {}): Promise<Uint8Array> {
  const asked = absoluteURL(url);
  const href = sourceURL(asked);
  const cache = await openCache(opts.noCache);
  const hit = await cache?.match(href);
  if (hit) {
    const bytes = new Uint8Array(await hit.arrayBuffer());
    opts.onProgress?.({ url: asked, loaded: bytes.byteLength, total: bytes.byteLength, done: true, fromCache: true });
    return bytes;
  }
  let res: Response;
  try {
    res = await fetch(href);
  } catch (e) {
    throw new Error(`Could not fetch ${href} (${e instanceof Error ? e.message : String(e)}) and it is not in the cache`);
  }
  if (!res.ok) throw new Error(`Could not fetch ${href}: HTTP ${res.status}`);
  const total = Number(res.headers.get('content-length') ?? 0) || 0;
  // (storage) A file that cannot fit is refused before its body is read.
  if (cache) await ensureRoom(href, total).catch(async (e: unknown) => {
    await res.body?.cancel();
    await storageFull(href);
    throw e;
  });
  const bytes = await readAll(res, asked, total, opts);
  if (cache) {
    const headers = new Headers({ 'content-type': res.headers.get('content-type') ?? 'application/octet-stream' });
    headers.set('content-length', String(bytes.byteLength));
    await cache.put(href, new Response(bytes as BodyInit, { headers })).catch(async (e: unknown) => {
      if (!isQuotaExceeded(e)) return; // other refusals: serve it uncached
      await cache.delete(href);
      await storageFull(href);
      const estimate = await navigator.storage?.estimate?.();
      throw new StorageFullError(href, bytes.byteLength, Math.max(0, (estimate?.quota ?? 0) - (estimate?.usage ?? 0)), true);
    });
  }
  opts.onProgress?.({ url: asked, loaded: bytes.byteLength, total: total || bytes.byteLength, done: true, fromCache: false });
  return bytes;
}

async function readAll(res: Response, url: string, total: number, opts: CachedFetchOptions): Promise<Uint8Array> {
  if (!res.body) return new Uint8Array(await res.arrayBuffer());
  const reader = res.body.getReader();
  const parts: Uint8Array[] = [];
  let loaded = 0;
  let last = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    loaded += value.byteLength;
    const now = Date.now();
    if (opts.onProgress && now - last > 100) {
      last = now;
      opts.onProgress({ url, loaded, total, done: false, fromCache: false });
    }
    if (opts.throttleMs) await new Promise((r) => setTimeout(r, opts.throttleMs));
  }
  const out = new Uint8Array(loaded);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

/**
 * Whether a model file can be had (in the cache, or a HEAD request succeeds), without
 * reading it. A file the server said it does not have (404) is remembered as absent in
 * the cache beside the files, so a model loaded once loads again offline without asking
 * for the optional files it lacks (external data, pooling config); evicting the model's
 * folder forgets it with the rest.
 */
export async function modelFileExists(url: string | URL, opts: Pick<CachedFetchOptions, 'noCache'> = {}): Promise<boolean> {
  const href = sourceURL(absoluteURL(url));
  const cache = await openCache(opts.noCache);
  if (await cache?.match(href)) return true;
  const absent = `${href}${href.includes('?') ? '&' : '?'}hearth-absent`;
  if (await cache?.match(absent)) return false;
  try {
    const res = await fetch(href, { method: 'HEAD' });
    if (res.status === 404) await cache?.put(absent, new Response(null)).catch(() => undefined);
    return res.ok;
  } catch {
    return false;
  }
}

/** A model file's size from the cache or a HEAD request (undefined when the server does not say). */
export async function modelFileSize(url: string | URL): Promise<number | undefined> {
  const href = sourceURL(absoluteURL(url));
  const res = (await (await openCache())?.match(href)) ?? (await fetch(href, { method: 'HEAD' }).catch(() => undefined));
  const n = Number(res?.headers.get('content-length') ?? NaN);
  return res?.ok && n > 0 ? n : undefined;
}

/**
 * Bytes [offset, offset + length) of a model file: sliced from the cached copy without
 * reading the rest (a Blob slice), else asked of the server as a range. A server that
 * answers with the whole file has it kept a few seconds, for the scan's next ranges.
 */
export async function readModelRange(url: string | URL, offset: number, length: number): Promise<Uint8Array> {
  const href = sourceURL(absoluteURL(url));
  const hit = await (await openCache())?.match(href);
  if (hit) return new Uint8Array(await (await hit.blob()).slice(offset, offset + length).arrayBuffer());
  if (wholeFile?.href !== href) {
    const res = await fetch(href, { headers: { Range: `bytes=${offset}-${offset + length - 1}` } });
    if (!res.ok) throw new Error(`Could not fetch ${href}: HTTP ${res.status}`);
    if (res.status === 206) return new Uint8Array(await res.arrayBuffer());
    wholeFile = { href, bytes: new Uint8Array(await res.arrayBuffer()) };
    setTimeout(() => (wholeFile = undefined), 10_000);
  }
  return wholeFile.bytes.slice(offset, offset + length);
}
let wholeFile: { href: string; bytes: Uint8Array } | undefined;

/**
 * A `fetch` for libraries that fetch model files themselves (transformers.js's
 * tokenizer loader): the same cache-first path, answered as a Response.
 */
export function cachedFetch(opts: CachedFetchOptions = {}): (input: RequestInfo | URL, init?: RequestInit) => Promise<Response> {
  return async (input) => {
    const url = typeof input === 'string' || input instanceof URL ? String(input) : input.url;
    try {
      const bytes = await fetchModelFile(url, opts);
      return new Response(bytes as BodyInit, { status: 200, headers: { 'content-length': String(bytes.byteLength) } });
    } catch (e) {
      const status = /HTTP (\d{3})/.exec(String(e))?.[1];
      return new Response(String(e), { status: status ? Number(status) : 404 });
    }
  };
}

/** (storage) Told the cache key of a file that did not fit, so the rest of its model can go too. */
let storageFull: (href: string) => Promise<void> = async () => undefined;

export function onStorageFull(fn: (href: string) => Promise<void>): void {
  storageFull = fn;
}

/** Forgets every cached model file (the demo's "clear cache" and tests use it). */
export async function clearModelCache(): Promise<void> {
  if (typeof caches !== 'undefined') await caches.delete(MODEL_CACHE);
}
