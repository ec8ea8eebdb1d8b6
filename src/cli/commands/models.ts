// hearth models list | add | remove | redeploy

import * as fs from 'node:fs';
import * as path from 'node:path';
import { isHubId, parseCatalog, upstreamSchema } from '../../engine/catalog.js';
import { CatalogError } from '../../engine/catalog-errors.js';
import { downloadModel } from '../../engine/hub/node.js';
import { CheckpointError } from '../../engine/models/files.js';
import type { CatalogEntry, DownloadProgress, ModelState, ModelTask } from '../../engine/protocol.js';
import { explainErrno } from '../../front/node/system-errors.js';
import { classifySource, checkId } from '../../ops/checkpoints.js';
import { entryFromSource } from '../../ops/model-source.js';
import { reportRows, verifyCheckpoint } from '../../ops/verify.js';
import { applyOverlay, readOverlay, recordAdd, recordRedeploy, recordRemove, updateOverlay } from '../../ops/served-catalog.js';
import type { AddModelRequest } from '../../types.js';
import { upstreamEntry } from '../../upstream/entry.js';
import type { UpstreamSpec } from '../../upstream/types.js';
import { HELP_OPTION, STORE_OPTIONS, intFlag, numberFlag, parse } from '../args.js';
import { CliError, UsageError } from '../errors.js';
import { defaultCatalogFile, hubCacheDir, resolveCatalogSource } from '../../paths.js';
import { downloadBars } from '../progress.js';
import { dataDirOf } from '../store.js';
import { formatTable } from '../table.js';
import type { Io } from '../io.js';
import { loadOrUnload } from './model-residency.js';
import { call, modelPath, positionalId, remoteOf, type Remote } from '../remote.js';

export const MODELS_HELP = `Usage: hearth models <list|add|remove|redeploy|load|unload> [options]

  hearth models list [--catalog FILE] [--data-dir D] [--json] [--url URL --key KEY]
      The catalog's models: id, task, class, context length, and whether the source
      folder exists locally. Default catalog: models/catalog.json of the package.
      With --data-dir, the served catalog of that data dir; with --url, the running
      server's models and their states.
  hearth models add --id svc/NAME --upstream URL[,URL] --upstream-model NAME [--upstream-key-env VAR]
      Serves svc/NAME by forwarding to OpenAI-speaking servers (vLLM, SGLang, another
      Hearth...) at those base URLs ("http://10.0.0.5:8000/v1"), with the key held in
      the environment variable VAR of the server (never stored). --task, --class,
      --context-length (default 32768) and --price-in/--price-out as below.
  hearth models add --id svc/NAME --from <folder | hub repo id> [options]
      Validates the checkpoint (config.json, tokenizer.json, tokenizer_config.json,
      onnx/model*.onnx, a supported model_type) and serves it as svc/NAME.
        --task T                           chat, completion, embedding or rerank; default: from the checkpoint
        --context-length N                 default: the config's max_position_embeddings
        --class C                          default: estimated from the config ("7B")
        --dtype D                          onnx file to use: fp32 (default), fp16, q8, q4, q4f16
        --price-in N --price-out N         USD per 1M input / output tokens (default 0)
      A hub repo id downloads into <data dir>/hub from HF_ENDPOINT (default: the public
      hub) with a progress bar per file; an interrupted download resumes when run again.
  hearth models verify <folder | hub repo id> [--dtype D] [--device cpu|cuda] [--json]
      Loads the checkpoint as the server would and runs it beside transformers.js on
      the same file and device: prints the graph interface found, the dtype, decode
      tokens/s, and whether greedy tokens and prompt lengths are equal for a few
      prompts (exit 1 when they are not). A hub repo id downloads into <data dir>/hub.
  hearth models remove <svc/NAME>
  hearth models redeploy <svc/NAME> [--wait]
      Loads the model afresh; meanwhile it is "redeploying" and new requests get 503
      model_not_ready, while requests in flight finish on the old instance.

  With --url URL --key KEY (an admin key), add/remove/redeploy act on that running
  server through /admin/models. Without --url they edit the served catalog in
  --data-dir (default ./.hearth): a server running on that data dir applies the
  change within a second; otherwise it is served from the next start.

  hearth models load ID --url URL --key KEY
  hearth models unload ID --url URL --key KEY [--force]
      Loads a model of a running server now (answers once it is ready), or unloads it
      (once its requests in flight have ended; --force cuts them). \`hearth ps\` lists
      what is loaded.

  --wait       (add, redeploy) wait until the model is ready or failed
  -h, --help   show this help
`;

export async function modelsCommand(args: string[], io: Io): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined) {
    io.err(MODELS_HELP);
    return 2;
  }
  if (sub === '-h' || sub === '--help' || sub === 'help') return io.out(MODELS_HELP), 0;
  switch (sub) {
    case 'list':
    case 'ls':
      return list(rest, io);
    case 'add':
      return add(rest, io);
    case 'remove':
    case 'rm':
      return remove(rest, io);
    case 'redeploy':
      return redeploy(rest, io);
    case 'verify':
      return verify(rest, io);
    case 'load':
    case 'unload':
      return loadOrUnload(sub, rest, io, MODELS_HELP);
    default:
      throw new UsageError(`models: unknown subcommand "${sub}" (expected list, add, remove, redeploy, load, unload or verify). Run "hearth models --help".`);
  }
}

const REMOTE_OPTIONS = {
  ...HELP_OPTION,
  ...STORE_OPTIONS,
  url: { type: 'string' },
  key: { type: 'string' },
  wait: { type: 'boolean' },
} as const;

/** Polls the server until the model is ready or failed, drawing its download progress. */
async function waitRemote(r: Remote, id: string, io: Io, timeoutMs = 30 * 60_000): Promise<ModelState> {
  const bars = downloadBars();
  const end = Date.now() + timeoutMs;
  try {
    for (;;) {
      const list = (await call(r, 'GET', '/admin/models')) as { data: (ModelState & { download?: DownloadProgress[] })[] };
      const m = list.data.find((x) => x.id === id);
      if (!m) throw new CliError(`${id} is no longer on the server`);
      for (const d of m.download ?? []) bars.update(d);
      if (m.status === 'ready' || m.status === 'failed') return m;
      if (Date.now() > end) throw new CliError(`${id} is still ${m.status} after ${timeoutMs / 1000} s`);
      await new Promise((res) => setTimeout(res, 250));
    }
  } finally {
    bars.stop();
    void io;
  }
}

function report(io: Io, m: ModelState): number {
  io.out(`${m.id}: ${m.status}${m.detail ? ` (${m.detail})` : ''}`);
  return m.status === 'failed' ? 1 : 0;
}

const DEVICES = ['cpu', 'cuda', 'webgpu', 'wasm'] as const;

async function add(args: string[], io: Io): Promise<number> {
  const { values } = parse('models add', args, {
    ...REMOTE_OPTIONS,
    id: { type: 'string' },
    from: { type: 'string' },
    task: { type: 'string' },
    'context-length': { type: 'string' },
    class: { type: 'string' },
    dtype: { type: 'string' },
    'price-in': { type: 'string' },
    'price-out': { type: 'string' },
    catalog: { type: 'string' },
    upstream: { type: 'string' },
    'upstream-model': { type: 'string' },
    'upstream-key-env': { type: 'string' },
  });
  if (values.help) return io.out(MODELS_HELP), 0;
  if (!values.id) throw new UsageError('models add: --id svc/NAME is required');
  const upstream = upstreamOf(values);
  if (!values.from && !upstream) throw new UsageError('models add: --from <folder | hub repo id> (or --upstream URL) is required');
  if (values.from && upstream) throw new UsageError('models add: give --from or --upstream, not both');
  const req: AddModelRequest = upstream ? { id: values.id, upstream } : { id: values.id, from: values.from };
  if (values.task !== undefined) {
    if (!['chat', 'completion', 'embedding', 'rerank', 'transcription'].includes(values.task)) throw new UsageError('models add: --task must be chat, completion, embedding, rerank or transcription');
    req.task = values.task as ModelTask;
  }
  const ctx = intFlag('models add', 'context-length', values['context-length'], 1);
  if (ctx !== undefined) req.context_length = ctx;
  if (values.class !== undefined) req.class = values.class;
  if (values.dtype !== undefined) req.dtype = Object.fromEntries(DEVICES.map((d) => [d, values.dtype!]));
  const pin = numberFlag('models add', 'price-in', values['price-in'], 0);
  const pout = numberFlag('models add', 'price-out', values['price-out'], 0);
  if (pin !== undefined || pout !== undefined) req.price = { input_per_1m: pin ?? 0, output_per_1m: pout ?? 0 };

  const remote = remoteOf('models add', values);
  if (remote) {
    // A relative folder means one here; the server resolves against its own directory.
    const local = req.from && path.resolve(req.from);
    if (local && fs.existsSync(local)) req.from = local;
    const m = (await call(remote, 'POST', '/admin/models', req)) as ModelState;
    io.out(`${m.id}: added on ${remote.url} (${m.status})`);
    if (values.wait || (values.from && isHubId(values.from))) return report(io, await waitRemote(remote, m.id, io));
    return 0;
  }

  const dataDir = dataDirOf(values, { create: true });
  try {
    checkId(req.id);
    const overlay = await readOverlay(dataDir);
    const base = readCatalogEntries(catalogOf(values));
    if (applyOverlay(base, overlay).some((e) => e.id === req.id)) {
      throw new CliError(`${req.id} already exists in the served catalog of ${dataDir}; remove it first, or redeploy it`);
    }
    const src = req.upstream ? undefined : classifySource(req.from!);
    let entry: CatalogEntry;
    if (!src) {
      entry = upstreamEntry({ ...req, upstream: req.upstream! });
    } else {
      // A hub repo is downloaded whole now, with progress, so the server starts it from disk.
      const bars = src.kind === 'hub' ? downloadBars() : undefined;
      try {
        entry = await entryFromSource(req, src, bars && ((p) => bars.update(p)));
      } finally {
        bars?.stop();
      }
    }
    await updateOverlay(dataDir, (o) => recordAdd(o, entry));
    io.out(`Added ${entry.id} (${entry.task}, ${entry.class}, context ${entry.context_length}) from ${entry.source}`);
    io.out(`A server using --data-dir ${dataDir} starts serving it within a second; otherwise it is served from the next start.`);
    return 0;
  } catch (e) {
    if (e instanceof CheckpointError) throw new CliError(e.message);
    throw e;
  }
}

/** --upstream URL[,URL] --upstream-model NAME [--upstream-key-env VAR], checked as the catalog checks it. */
function upstreamOf(values: { upstream?: string; 'upstream-model'?: string; 'upstream-key-env'?: string }): UpstreamSpec | undefined {
  if (values.upstream === undefined) {
    if (values['upstream-model'] || values['upstream-key-env']) throw new UsageError('models add: --upstream-model and --upstream-key-env go with --upstream URL');
    return undefined;
  }
  if (!values['upstream-model']) throw new UsageError('models add: --upstream needs --upstream-model NAME (the model name the upstream knows)');
  const spec = {
    urls: values.upstream.split(',').map((u) => u.trim()).filter(Boolean),
    model: values['upstream-model'],
    ...(values['upstream-key-env'] ? { api_key_env: values['upstream-key-env'] } : {}),
  };
  const r = upstreamSchema.safeParse(spec);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    const flag = issue.path[0] === 'urls' ? '--upstream' : issue.path[0] === 'model' ? '--upstream-model' : '--upstream-key-env';
    throw new UsageError(`models add: ${flag}: ${issue.message}`);
  }
  return r.data;
}

async function remove(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse('models remove', args, { ...REMOTE_OPTIONS, catalog: { type: 'string' } }, true);
  if (values.help) return io.out(MODELS_HELP), 0;
  const id = positionalId('models remove', positionals);
  const remote = remoteOf('models remove', values);
  if (remote) {
    await call(remote, 'DELETE', modelPath(id));
    io.out(`${id}: removed from ${remote.url}`);
    return 0;
  }
  const dataDir = dataDirOf(values, { create: true });
  const base = readCatalogEntries(catalogOf(values));
  if (!applyOverlay(base, await readOverlay(dataDir)).some((e) => e.id === id)) {
    throw new CliError(`${id} is not in the served catalog of ${dataDir}`);
  }
  await updateOverlay(dataDir, (o) => recordRemove(o, id));
  io.out(`${id}: removed from the served catalog of ${dataDir}`);
  return 0;
}

async function redeploy(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse('models redeploy', args, { ...REMOTE_OPTIONS, catalog: { type: 'string' } }, true);
  if (values.help) return io.out(MODELS_HELP), 0;
  const id = positionalId('models redeploy', positionals);
  const remote = remoteOf('models redeploy', values);
  if (remote) {
    const m = (await call(remote, 'POST', `${modelPath(id)}/redeploy`)) as ModelState;
    io.out(`${id}: ${m.status} on ${remote.url}`);
    if (values.wait) return report(io, await waitRemote(remote, id, io));
    return 0;
  }
  const dataDir = dataDirOf(values, { create: true });
  const base = readCatalogEntries(catalogOf(values));
  if (!applyOverlay(base, await readOverlay(dataDir)).some((e) => e.id === id)) {
    throw new CliError(`${id} is not in the served catalog of ${dataDir}`);
  }
  await updateOverlay(dataDir, (o) => recordRedeploy(o, id));
  io.out(`${id}: redeploy requested; a server using --data-dir ${dataDir} starts it within a second`);
  return 0;
}

/** The catalog file of --catalog (default: the package's), and how errors name it. */
function catalogOf(values: { catalog?: string }): { file: string; label: string; given: boolean } {
  const file = path.resolve(values.catalog ?? defaultCatalogFile());
  return values.catalog !== undefined ? { file, label: `--catalog ${values.catalog}`, given: true } : { file, label: `the catalog ${file}`, given: false };
}

/** The catalog's entries with local sources resolved against its folder (hub ids kept);
 * none when the package's own catalog is missing. */
function readCatalogEntries(c: { file: string; label: string; given: boolean }): CatalogEntry[] {
  if (!c.given && !fs.existsSync(c.file)) return [];
  return readCatalog(c.file, c.label).map((e) => ({ ...e, source: isHubId(e.source) ? e.source : resolveCatalogSource(c.file, e.source) }));
}

/** Reads a catalog: an array of entries, or an object with a `models` array; each entry
 * checked as the server checks it, sources as written. */
export function readCatalog(file: string, label = `the catalog ${file}`): CatalogEntry[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new CliError(`${label} cannot be read: ${explainErrno(err)}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new CliError(`${label} is not valid JSON: ${(err as Error).message}`);
  }
  const entries = Array.isArray(data) ? data : (data as { models?: unknown })?.models;
  if (!Array.isArray(entries)) throw new CliError(`${label} holds neither an array of models nor {"models": [...]}`);
  try {
    return parseCatalog(JSON.stringify({ models: entries }), (source) => source);
  } catch (err) {
    throw err instanceof CatalogError ? new CliError(`${label}: ${err.problems}`) : err;
  }
}

async function list(args: string[], io: Io): Promise<number> {
  const { values } = parse('models list', args, {
    ...HELP_OPTION,
    ...STORE_OPTIONS,
    catalog: { type: 'string' },
    json: { type: 'boolean' },
    url: { type: 'string' },
    key: { type: 'string' },
  });
  if (values.help) return io.out(MODELS_HELP), 0;
  const remote = remoteOf('models list', values);
  if (remote) {
    const { data } = (await call(remote, 'GET', '/admin/models')) as { data: ModelState[] };
    if (values.json) return io.out(JSON.stringify(data, null, 2)), 0;
    io.out(
      formatTable(
        ['ID', 'TASK', 'CLASS', 'CONTEXT', 'STATUS', 'DETAIL'],
        data.map((m) => [m.id, m.task, m.class, m.context_length, m.status, m.detail ?? '']),
      ),
    );
    return 0;
  }
  const catalog = catalogOf(values);
  const { file } = catalog;
  // With --data-dir: the served catalog (the package's plus what was added or removed there).
  const entries: CatalogEntry[] =
    values['data-dir'] !== undefined
      ? applyOverlay(readCatalogEntries(catalog), await readOverlay(dataDirOf(values)))
      : readCatalog(file, catalog.label);
  const cache = values['data-dir'] !== undefined ? hubCacheDir() : undefined;
  const rows = entries.map((e) => {
    const source = typeof e.source === 'string' ? e.source : '';
    const local =
      source !== '' &&
      (isHubId(source) ? cache !== undefined && fs.existsSync(path.join(cache, source, 'config.json')) : fs.existsSync(resolveCatalogSource(file, source)));
    return { id: e.id, task: e.task, class: e.class, context_length: e.context_length, source, local };
  });
  if (values.json) {
    io.out(JSON.stringify(rows, null, 2));
    return 0;
  }
  if (!rows.length) {
    io.out(`The catalog ${file} lists no models.`);
    return 0;
  }
  io.out(
    formatTable(
      ['ID', 'TASK', 'CLASS', 'CONTEXT', 'LOCAL', 'SOURCE'],
      rows.map((r) => [String(r.id), String(r.task), String(r.class), r.context_length, r.local ? 'yes' : 'no', r.source]),
    ),
  );
  return 0;
}

async function verify(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse('models verify', args, {
    ...HELP_OPTION,
    ...STORE_OPTIONS,
    dtype: { type: 'string' },
    device: { type: 'string' },
    json: { type: 'boolean' },
  }, true);
  if (values.help) return io.out(MODELS_HELP), 0;
  const from = positionals[0];
  if (!from || positionals.length > 1) throw new UsageError('models verify: give one folder or hub repo id');
  const device = values.device ?? 'cpu';
  if (device !== 'cpu' && device !== 'cuda') throw new UsageError(`models verify: --device is cpu or cuda (got "${device}")`);
  const src = classifySource(from);
  let folder: string;
  if (src.kind === 'folder') folder = src.folder;
  else {
    const bars = downloadBars();
    try {
      folder = await downloadModel({ cacheDir: hubCacheDir() }, { repo: src.repo, task: 'chat', dtype: values.dtype, onProgress: (p) => bars.update(p) });
    } finally {
      bars.stop();
    }
  }
  let report;
  try {
    report = await verifyCheckpoint({ folder, dtype: values.dtype, device });
  } catch (e) {
    throw new CliError(`models verify: ${folder} cannot be served: ${(e as Error).message}`);
  }
  if (values.json) io.out(JSON.stringify(report, null, 2));
  else io.out(formatTable(['check', 'result'], reportRows(report)));
  return report.parity ? 0 : 1;
}
