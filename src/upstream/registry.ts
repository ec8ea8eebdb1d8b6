// The upstream models being served, beside the local engine: each has its pool of
// URLs and a health watch. `withUpstreams` puts them behind the engine's own
// interface (models, add, remove, redeploy), so the catalog, the admin routes and
// model lookup treat both kinds alike; only the routes' forwarding differs.
import type { CatalogEntry, EngineApi, ModelState } from '../engine/protocol.js';
import { watchHealth } from './health.js';
import type { ForwardDeps } from './forward.js';
import { UpstreamPool } from './pool.js';
import type { TargetStatus, Transport, UpstreamObserver, UpstreamSpec } from './types.js';

export interface UpstreamsOptions {
  /** Default: the global fetch. */
  transport?: Transport;
  /** Where api_key_env names are looked up (default: process.env where there is one). */
  env?: (name: string) => string | undefined;
  observer?: UpstreamObserver;
}

type UpstreamEntry = CatalogEntry & { upstream: UpstreamSpec };

export const isUpstream = (e: CatalogEntry): e is UpstreamEntry => e.upstream != null;

const processEnv = (name: string) => (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env[name];

export class Upstreams {
  readonly deps: ForwardDeps;
  #models = new Map<string, { entry: UpstreamEntry; pool: UpstreamPool; stop: () => void; created: number }>();

  constructor(opts: UpstreamsOptions = {}) {
    this.deps = {
      transport: opts.transport ?? ((url, init) => fetch(url, init)),
      key: opts.env ?? processEnv,
      observer: opts.observer,
    };
  }

  get size(): number {
    return this.#models.size;
  }

  has(id: string): boolean {
    return this.#models.has(id);
  }

  entry(id: string): UpstreamEntry | undefined {
    return this.#models.get(id)?.entry;
  }

  pool(id: string): UpstreamPool | undefined {
    return this.#models.get(id)?.pool;
  }

  add(entry: UpstreamEntry): ModelState {
    this.remove(entry.id);
    const pool = new UpstreamPool(entry.id, entry.upstream);
    this.#models.set(entry.id, { entry, pool, stop: watchHealth(pool, this.deps), created: Math.floor(Date.now() / 1000) });
    return this.state(entry.id)!;
  }

  remove(id: string): boolean {
    const m = this.#models.get(id);
    if (!m) return false;
    m.stop();
    this.#models.delete(id);
    return true;
  }

  state(id: string): ModelState | undefined {
    const m = this.#models.get(id);
    if (!m) return undefined;
    const { status, detail } = m.pool.state();
    return {
      id,
      task: m.entry.task,
      class: m.entry.class,
      context_length: m.entry.context_length,
      status,
      created: m.created,
      owned_by: m.entry.owned_by ?? 'hearth',
      ...(detail ? { detail } : {}),
    };
  }

  models(): ModelState[] {
    return [...this.#models.keys()].map((id) => this.state(id)!);
  }

  /** Every URL of every upstream model, for /status and /metrics. */
  targets(): TargetStatus[] {
    return [...this.#models.values()].flatMap((m) => m.pool.targets.map((t) => t.status(m.entry.id)));
  }

  close(): void {
    for (const id of [...this.#models.keys()]) this.remove(id);
  }
}

/** The engine with upstream models beside its own: entries with `upstream` never reach the engine. */
export type RoutedEngine = EngineApi & { upstreams: Upstreams; terminate?: () => Promise<void> };

export function withUpstreams(engine: EngineApi & { terminate?: () => Promise<void> }, upstreams: Upstreams): RoutedEngine {
  const wrapped: RoutedEngine = {
    upstreams,
    load(entries) {
      for (const e of entries.filter(isUpstream)) upstreams.add(e);
      return engine.load(entries.filter((e) => !isUpstream(e)));
    },
    async models() {
      return [...(await engine.models()), ...upstreams.models()];
    },
    generate: (req, onToken) => engine.generate(req, onToken),
    cancel: (id) => engine.cancel(id),
    embed: (req) => engine.embed(req),
    score: (req) => engine.score(req),
    transcribe: engine.transcribe && ((req, onDelta) => engine.transcribe!(req, onDelta)),
    countTokens: engine.countTokens && ((req) => engine.countTokens!(req)),
    tokenize: engine.tokenize && ((req) => engine.tokenize!(req)),
    detokenize: engine.detokenize && ((req) => engine.detokenize!(req)),
    async dispose() {
      upstreams.close();
      await engine.dispose();
    },
    stats: engine.stats && (() => engine.stats!()),
    // An upstream's model is the upstream's to load: the local engine loads and unloads its own.
    loadModel: engine.loadModel && ((id) => engine.loadModel!(id)),
    unloadModel: engine.unloadModel && ((id, opts) => engine.unloadModel!(id, opts)),
  };
  if (engine.add) {
    wrapped.add = async (entry) => (isUpstream(entry) ? upstreams.add(entry) : engine.add!(entry));
  }
  if (engine.remove) {
    wrapped.remove = async (id) => {
      if (!upstreams.remove(id)) await engine.remove!(id);
    };
  }
  if (engine.redeploy) {
    // Redeploying an upstream model re-creates its pool (fresh probes); an entry may
    // also turn a local model into an upstream one or back.
    wrapped.redeploy = async (id, entry) => {
      const next = entry ?? upstreams.entry(id);
      if (next && isUpstream(next)) {
        if (!upstreams.has(id)) await engine.remove?.(id).catch(() => undefined);
        return upstreams.add(next);
      }
      if (upstreams.remove(id) && next && engine.add) return engine.add(next);
      return engine.redeploy!(id, entry);
    };
  }
  if (engine.terminate) {
    wrapped.terminate = async () => {
      upstreams.close();
      await engine.terminate!();
    };
  }
  return wrapped;
}
