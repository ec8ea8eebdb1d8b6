// Hub downloads in Node, into the data dir, through transformers.js.
//
// transformers.js decides where files come from and which files a model needs:
// `env.remoteHost` (from HF_ENDPOINT when it is set; otherwise the library's own
// default) with `env.remotePathTemplate` '{model}/resolve/{revision}/', and
// `ModelRegistry.get_files` for the file list (config.json fetched on the way).
// It downloads the JSON files itself into `env.cacheDir` (its FileCache writes a
// temporary file and renames it once the body is complete; a cut connection
// deletes the temporary file). The ONNX weights it would only fetch while also
// building an inference session, so those are streamed here, at the same URLs and
// into the same cache layout: into `<file>.partial`, checked against the length
// the server announced, then renamed. A cut download leaves only the .partial,
// which the next attempt resumes with a Range request. A file at its final name
// is always whole.
import { createWriteStream, existsSync } from 'node:fs';
import { mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { AutoTokenizer, ModelRegistry, env } from '@huggingface/transformers';
import { CHAT_TEMPLATE_FILE, onnxFileFor } from '../models/files.js';
import type { CatalogEntry, DownloadProgress } from '../protocol.js';
import type { HubFetcher, HubPlan } from './types.js';

export interface HubOptions {
  /** Where downloaded repos go: `<cacheDir>/<org>/<name>/...` (Hearth uses `<dataDir>/hub`). */
  cacheDir: string;
  /** The hub's base URL; default HF_ENDPOINT, else transformers.js's default host. */
  endpoint?: string;
  revision?: string;
}

/** Points transformers.js at the hub mirror (if any) and the cache folder. */
export function configureHub(opts: HubOptions): void {
  const endpoint = opts.endpoint ?? process.env.HF_ENDPOINT;
  if (endpoint) env.remoteHost = endpoint.endsWith('/') ? endpoint : `${endpoint}/`;
  env.remotePathTemplate = '{model}/resolve/{revision}/';
  env.allowRemoteModels = true;
  env.useBrowserCache = false;
  env.useFSCache = true;
  env.cacheDir = opts.cacheDir;
}

/** The folder a repo's files land in. */
export function repoFolder(cacheDir: string, repo: string): string {
  return join(cacheDir, ...repo.split('/'));
}

/** The URL transformers.js would fetch `file` of `repo` from. */
export function fileUrl(repo: string, file: string, revision = 'main'): string {
  const path = env.remotePathTemplate.replaceAll('{model}', repo).replaceAll('{revision}', encodeURIComponent(revision));
  const host = env.remoteHost.endsWith('/') ? env.remoteHost : `${env.remoteHost}/`;
  return `${host}${path.replace(/^\/+/, '')}${file}`;
}

export class DownloadError extends Error {
  override readonly name = 'DownloadError';
  constructor(
    message: string,
    /** No answer came from the hub (refused, unresolved, timed out), as opposed to an answer refusing the file. */
    readonly unreachable = false,
  ) {
    super(message);
  }
}

/** What a VLM's processor reads besides transformers.js's file list (which has preprocessor_config.json at most). */
const VLM_FILES = ['preprocessor_config.json', 'processor_config.json', 'chat_template.json'];
const VLM_OPTIONAL = ['processor_config.json', 'chat_template.json'];
const SPEECH_FILES = ['preprocessor_config.json', 'generation_config.json'];

export interface DownloadRequest {
  repo: string;
  task: CatalogEntry['task'];
  /** The dtype wanted (transformers.js naming: fp32, fp16, q8, q4, q4f16). */
  dtype?: string;
  onProgress?: (p: DownloadProgress) => void;
}

/**
 * Downloads what a model needs into `<cacheDir>/<repo>/` and returns that folder.
 * Complete files are not fetched again; a .partial left by an interrupted run resumes.
 */
export async function downloadModel(opts: HubOptions, req: DownloadRequest): Promise<string> {
  configureHub(opts);
  const revision = opts.revision ?? 'main';
  const folder = repoFolder(opts.cacheDir, req.repo);
  const onProgress = req.onProgress ?? (() => undefined);

  const files = await listFiles(req);
  const progress_callback = (p: { status: string; file?: string; loaded?: number; total?: number }) => {
    if (!p.file) return;
    if (p.status === 'progress') onProgress({ file: p.file, loaded: p.loaded ?? 0, total: p.total ?? 0, done: false });
    if (p.status === 'done') onProgress({ file: p.file, loaded: 0, total: 0, done: true });
  };
  // The tokenizer files, through transformers.js (and its FileCache).
  if (req.task !== 'embedding' || files.includes('tokenizer.json')) {
    try {
      await AutoTokenizer.from_pretrained(req.repo, { revision, progress_callback } as never);
    } catch (e) {
      throw new DownloadError(`cannot download the tokenizer of ${req.repo}: ${(e as Error).message}`);
    }
  }
  // Embedders' pooling mode lives in sentence-transformers' module folder (decoder embedders: last token).
  const pooling = req.task === 'embedding' ? ['1_Pooling/config.json'] : [];
  // A vision-language model (its list has a vision encoder) needs its processor's configs too.
  const vision = files.some((f) => f.startsWith('onnx/vision_encoder')) ? VLM_FILES : [];
  // So does a Whisper (its list has an encoder_model): the feature extractor's settings, and its decoding rules.
  const speech = files.some((f) => f.startsWith('onnx/encoder_model')) ? SPEECH_FILES : [];
  // transformers.js's file list leaves out chat_template.jinja, where newer exports keep the chat template.
  const optional = new Set(['generation_config.json', 'special_tokens_map.json', CHAT_TEMPLATE_FILE, ...pooling, ...VLM_OPTIONAL]);
  const wanted = [...new Set([...files, 'tokenizer.json', 'tokenizer_config.json', ...pooling, ...vision, ...speech, CHAT_TEMPLATE_FILE])];
  // A folder holding every file it needs was downloaded before: it starts with no hub reachable,
  // an optional file it lacks staying absent. A fresh download fails instead, so it is retried whole.
  const downloadedBefore = wanted.every((f) => optional.has(f) || existsSync(join(folder, f)));
  for (const file of wanted) {
    const dest = join(folder, file);
    if (existsSync(dest)) continue;
    await downloadFile(fileUrl(req.repo, file, revision), dest, {
      optional: optional.has(file),
      onProgress: (loaded, total, done) => onProgress({ file, loaded, total, done }),
    }).catch((e: unknown) => {
      if (!(downloadedBefore && optional.has(file) && e instanceof DownloadError && e.unreachable)) throw e;
    });
  }
  return folder;
}

/** The files transformers.js would load for the repo and dtype (it reads config.json on the way). */
async function listFiles(req: Pick<DownloadRequest, 'repo' | 'dtype'>): Promise<string[]> {
  try {
    return await ModelRegistry.get_files(req.repo, { dtype: (req.dtype ?? 'fp32') as never, device: 'cpu', include_processor: false });
  } catch (e) {
    throw new DownloadError(`cannot list the files of ${req.repo} at ${env.remoteHost}: ${(e as Error).message}`);
  }
}

/**
 * What a download would bring, without bringing it: each file's size from a HEAD request
 * (the hub announces an LFS file's size as x-linked-size before redirecting), and config.json.
 */
export async function planDownload(opts: HubOptions, req: Pick<DownloadRequest, 'repo' | 'dtype'>): Promise<HubPlan> {
  configureHub(opts);
  const revision = opts.revision ?? 'main';
  const folder = repoFolder(opts.cacheDir, req.repo);
  const files: HubPlan['files'] = [];
  for (const file of await listFiles(req)) {
    // A file already here is measured here: a downloaded model loads with no hub reachable.
    const local = await stat(join(folder, file)).catch(() => undefined);
    if (local) {
      files.push({ file, bytes: local.size });
      continue;
    }
    const res = await fetch(fileUrl(req.repo, file, revision), { method: 'HEAD' }).catch((e: unknown) => {
      throw new DownloadError(`cannot reach ${req.repo}/${file}: ${(e as Error).message}${causeOf(e)}`);
    });
    if (!res.ok) throw new DownloadError(`${req.repo}/${file}: the hub answered ${res.status}`);
    files.push({ file, bytes: Number(res.headers.get('x-linked-size') ?? res.headers.get('content-length') ?? 0) });
  }
  const config = await readFile(join(folder, 'config.json'), 'utf8')
    .catch(async () => (await fetch(fileUrl(req.repo, 'config.json', revision))).text())
    .then((text) => JSON.parse(text) as Record<string, unknown>)
    .catch(() => undefined);
  return { files, config };
}

/**
 * Streams `url` into `dest` through `dest.partial`: resumes a .partial with a Range
 * request, refuses a body shorter or longer than announced, and renames only a whole file.
 * Returns false for an optional file the server does not have.
 */
export async function downloadFile(
  url: string,
  dest: string,
  opts: { optional?: boolean; onProgress?: (loaded: number, total: number, done: boolean) => void } = {},
): Promise<boolean> {
  // One writer per file: this process (a Map) and others (a lock file naming the pid).
  const prior = inProcess.get(dest);
  if (prior) {
    await prior.catch(() => undefined);
    if (existsSync(dest)) return true;
  }
  const run = (async () => {
    const release = await lockFile(`${dest}.lock`);
    try {
      if (existsSync(dest)) return true; // another process finished it meanwhile
      return await fetchInto(url, dest, opts);
    } finally {
      await release();
    }
  })();
  inProcess.set(dest, run);
  try {
    return await run;
  } finally {
    if (inProcess.get(dest) === run) inProcess.delete(dest);
  }
}

const inProcess = new Map<string, Promise<boolean>>();

/** Takes `path` as a lock (exclusive create, holding our pid); waits while a live process holds it. */
async function lockFile(path: string): Promise<() => Promise<void>> {
  await mkdir(dirname(path), { recursive: true });
  for (;;) {
    try {
      const fh = await open(path, 'wx');
      await fh.writeFile(String(process.pid));
      await fh.close();
      return () => rm(path, { force: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const pid = Number(await readFile(path, 'utf8').catch(() => ''));
    if (!(pid > 0) || pid === process.pid || !alive(pid)) {
      await rm(path, { force: true }); // left by a process that died (or unreadable): take it over
      continue;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function fetchInto(
  url: string,
  dest: string,
  opts: { optional?: boolean; onProgress?: (loaded: number, total: number, done: boolean) => void },
): Promise<boolean> {
  const partial = `${dest}.partial`;
  await mkdir(dirname(dest), { recursive: true });
  let have = await stat(partial).then((s) => s.size, () => 0);
  const headers: Record<string, string> = { 'user-agent': 'hearth' };
  const token = process.env.HF_TOKEN;
  if (token) headers.authorization = `Bearer ${token}`;
  if (have > 0) headers.range = `bytes=${have}-`;
  let res: Response;
  try {
    res = await fetch(url, { headers, redirect: 'follow' });
  } catch (e) {
    throw new DownloadError(`${url}: ${(e as Error).message}${causeOf(e)}`, true);
  }
  if (res.status === 404 && opts.optional) return false;
  if (res.status === 416 && have > 0) {
    // The .partial is as long as the file or longer: start again.
    await rm(partial, { force: true });
    return fetchInto(url, dest, opts);
  }
  if (res.status !== 200 && res.status !== 206) {
    throw new DownloadError(`${url}: HTTP ${res.status}${res.status === 401 || res.status === 403 ? ' (a gated or private repo needs HF_TOKEN)' : ''}`);
  }
  let total: number;
  if (res.status === 206) {
    const m = /bytes (\d+)-\d+\/(\d+)/.exec(res.headers.get('content-range') ?? '');
    if (!m || Number(m[1]) !== have) {
      await res.body?.cancel();
      await rm(partial, { force: true });
      return fetchInto(url, dest, opts);
    }
    total = Number(m[2]);
  } else {
    have = 0; // the server ignored the Range: start over
    const len = res.headers.get('content-length');
    total = len ? Number(len) : 0;
  }
  const out = createWriteStream(partial, { flags: have > 0 ? 'a' : 'w' });
  const written = new Promise<void>((resolve, reject) => {
    out.on('finish', resolve);
    out.on('error', reject);
  });
  let loaded = have;
  let last = 0;
  try {
    const reader = res.body!.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!out.write(value)) await new Promise<void>((r) => out.once('drain', () => r()));
      loaded += value.length;
      const now = Date.now();
      if (now - last > 100) {
        last = now;
        opts.onProgress?.(loaded, total, false);
      }
    }
  } catch (e) {
    out.end();
    await written.catch(() => undefined);
    throw new DownloadError(`${url}: the download was cut at ${loaded} of ${total || '?'} bytes (${(e as Error).message}${causeOf(e)}); run it again to resume`);
  }
  out.end();
  await written;
  if (total && loaded !== total) {
    throw new DownloadError(`${url}: got ${loaded} bytes, expected ${total}; run it again to resume`);
  }
  const fh = await open(partial, 'r+');
  await fh.sync();
  await fh.close();
  await rename(partial, dest);
  opts.onProgress?.(loaded, total || loaded, true);
  return true;
}

function causeOf(e: unknown): string {
  const c = (e as { cause?: { message?: string; code?: string } })?.cause;
  return c ? ` (${c.code ?? c.message ?? ''})` : '';
}

/** The engine's hub fetcher in a Node worker: downloads a catalog entry's repo into `cacheDir`. */
export function nodeHub(opts: HubOptions): HubFetcher {
  return {
    plan: (entry, device) => planDownload(opts, { repo: entry.source, dtype: dtypeOf(entry, device) }),
    fetch: (entry, device, onProgress) =>
      downloadModel(opts, {
        repo: entry.source,
        task: entry.task,
        dtype: dtypeOf(entry, device),
        onProgress,
      }),
  };
}

/** The dtype an entry names for a device (fp32 when it names none). */
export function dtypeOf(entry: Pick<CatalogEntry, 'dtype' | 'id'>, device: string): string {
  onnxFileFor(entry as CatalogEntry, device); // throws on a dtype the engine cannot load
  return entry.dtype?.[device as keyof NonNullable<CatalogEntry['dtype']>] ?? 'fp32';
}
