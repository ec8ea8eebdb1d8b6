// The Node server's model operations (Runtime.admin): add, remove and redeploy
// models while serving, each recorded in the served catalog in the data dir. It
// also watches that file, so `hearth models add|remove|redeploy` without --url
// reaches a running server that uses the same data dir.
import { unwatchFile, watchFile } from 'node:fs';
import { join } from 'node:path';
import { ApiError, modelNotFound } from '../api/errors.js';
import type { CatalogEntry, Device, EngineApi, ModelState } from '../engine/protocol.js';
import type { AddModelRequest, ModelAdmin } from '../types.js';
import { classifySource, entryFromFolder, entryFromHub } from './checkpoints.js';
import { hubCacheDir } from '../paths.js';
import { upstreamEntry } from '../upstream/entry.js';
import {
  applyOverlay,
  readOverlay,
  recordAdd,
  recordRedeploy,
  recordRemove,
  servedCatalogPath,
  updateOverlay,
  type Overlay,
} from './served-catalog.js';

export interface ModelOpsOptions {
  engine: EngineApi;
  /** The package (or --catalog) catalog, before the data dir's changes. */
  base: CatalogEntry[];
  dataDir: string;
  device?: Device;
  /** Where relative folders in add requests are resolved (default: the process's cwd). */
  cwd?: string;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
}


function badCheckpoint(e: unknown): never {
  if (e instanceof Error && e.name === 'CheckpointError') {
    throw new ApiError(400, 'invalid_request_error', 'invalid_checkpoint', e.message, 'from');
  }
  throw e;
}

export class ModelOps implements ModelAdmin {
  #served: CatalogEntry[];
  #stamps: Record<string, string>;
  #chain: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly opts: ModelOpsOptions,
    overlay: Overlay,
  ) {
    this.#served = applyOverlay(opts.base, overlay);
    this.#stamps = { ...overlay.redeploys };
  }

  /** Reads the data dir's served catalog; `entries()` is what to load at start. */
  static async open(opts: ModelOpsOptions): Promise<ModelOps> {
    return new ModelOps(opts, await readOverlay(opts.dataDir));
  }

  /** The entries being served (prices and metadata for the router). */
  entries(): CatalogEntry[] {
    return this.#served;
  }

  private get engine(): Required<Pick<EngineApi, 'add' | 'remove' | 'redeploy'>> & EngineApi {
    const e = this.opts.engine;
    if (!e.add || !e.remove || !e.redeploy) {
      throw new ApiError(501, 'invalid_request_error', 'not_supported', 'This engine cannot change its models at run time.');
    }
    return e as Required<Pick<EngineApi, 'add' | 'remove' | 'redeploy'>> & EngineApi;
  }

  /** One operation at a time (HTTP calls and the file watcher alike). */
  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#chain.then(fn);
    this.#chain = run.catch(() => undefined);
    return run;
  }

  add(req: AddModelRequest): Promise<ModelState> {
    return this.#serial(async () => {
      if (this.#served.some((e) => e.id === req.id)) {
        throw new ApiError(400, 'invalid_request_error', 'model_exists', `The model \`${req.id}\` already exists; remove it first, or redeploy it.`, 'id');
      }
      if (req.upstream) return this.#addEntry(upstreamEntry({ ...req, upstream: req.upstream }));
      const src = (() => {
        try {
          return classifySource(req.from ?? '', this.opts.cwd);
        } catch (e) {
          return badCheckpoint(e);
        }
      })();
      const entry =
        src.kind === 'folder'
          ? await entryFromFolder(req, src.folder, this.opts.device).catch(badCheckpoint)
          : await entryFromHub(req, src.repo, hubCacheDir()).catch(badCheckpoint);
      return this.#addEntry(entry);
    });
  }

  async #addEntry(entry: CatalogEntry): Promise<ModelState> {
    const state = await this.engine.add(entry);
    this.#served = [...this.#served, entry];
    await updateOverlay(this.opts.dataDir, (o) => recordAdd(o, entry));
    this.opts.log?.('model added', { model: entry.id, source: entry.source });
    return state;
  }

  remove(id: string): Promise<void> {
    return this.#serial(async () => {
      if (!this.#served.some((e) => e.id === id)) throw modelNotFound(id);
      this.#served = this.#served.filter((e) => e.id !== id);
      await updateOverlay(this.opts.dataDir, (o) => recordRemove(o, id));
      await this.engine.remove(id).catch(() => undefined); // already gone from the engine is fine
      this.opts.log?.('model removed', { model: id });
    });
  }

  redeploy(id: string): Promise<ModelState> {
    return this.#serial(async () => {
      const entry = this.#served.find((e) => e.id === id);
      if (!entry) throw modelNotFound(id);
      const state = await this.engine.redeploy(id, entry);
      const o = await updateOverlay(this.opts.dataDir, (x) => recordRedeploy(x, id));
      this.#stamps[id] = o.redeploys[id]!;
      this.opts.log?.('model redeploying', { model: id });
      return state;
    });
  }

  list(): Promise<ModelState[]> {
    return this.opts.engine.models();
  }

  /** Applies the data dir's served catalog to the engine: adds, removes, changed entries and redeploy requests. */
  reconcile(): Promise<void> {
    return this.#serial(async () => {
      let overlay: Overlay;
      try {
        overlay = await readOverlay(this.opts.dataDir);
      } catch (e) {
        this.opts.log?.('served catalog unreadable; keeping the current models', { error: (e as Error).message });
        return;
      }
      const want = applyOverlay(this.opts.base, overlay);
      const engine = this.engine;
      for (const e of this.#served) {
        if (!want.some((w) => w.id === e.id)) {
          await engine.remove(e.id).catch(() => undefined);
          this.opts.log?.('model removed (served catalog)', { model: e.id });
        }
      }
      for (const w of want) {
        const had = this.#served.find((e) => e.id === w.id);
        if (!had) {
          await engine.add(w).catch(() => undefined);
          this.opts.log?.('model added (served catalog)', { model: w.id, source: w.source });
        } else if (JSON.stringify(had) !== JSON.stringify(w) || (overlay.redeploys[w.id] ?? '') !== (this.#stamps[w.id] ?? '')) {
          await engine.redeploy(w.id, w).catch(() => undefined);
          this.opts.log?.('model redeploying (served catalog)', { model: w.id });
        }
      }
      this.#served = want;
      this.#stamps = { ...overlay.redeploys };
    });
  }

  /** Polls the served catalog file for changes made by the CLI; returns a stop function. */
  watch(intervalMs = 500): () => void {
    const file = servedCatalogPath(this.opts.dataDir);
    const onChange = () => void this.reconcile().catch(() => undefined);
    watchFile(file, { interval: intervalMs, persistent: false }, onChange);
    return () => unwatchFile(file, onChange);
  }
}

/** Logs each model's status changes (starting → ready, failed with the reason, redeploying) as they happen. */
export function logModelStates(
  engine: EngineApi,
  log: (level: 'info' | 'error', msg: string, fields: Record<string, unknown>) => void,
  intervalMs = 500,
): () => void {
  const seen = new Map<string, string>();
  let busy = false;
  const tick = async () => {
    if (busy) return;
    busy = true;
    try {
      const models = await engine.models();
      for (const m of models) {
        const key = `${m.status}|${m.status === 'failed' ? (m.detail ?? '') : ''}`;
        if (seen.get(m.id) === key) continue;
        seen.set(m.id, key);
        if (m.status === 'failed') log('error', 'model failed', { model: m.id, reason: m.detail });
        else log('info', `model ${m.status}`, { model: m.id, ...(m.detail ? { detail: m.detail } : {}), ...(m.workarounds ? { workarounds: m.workarounds } : {}) });
      }
      for (const id of [...seen.keys()]) if (!models.some((m) => m.id === id)) seen.delete(id);
    } catch {
      // the engine is restarting: try again next time
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void tick(), intervalMs);
  timer.unref();
  void tick();
  return () => clearInterval(timer);
}
