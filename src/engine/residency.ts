// Which models hold memory: the policy of on-demand loading. A request for a model that is not
// loaded loads it and waits (requests meanwhile share the load); a load that would pass
// `maxLoadedModels` or `memoryBudgetMb` first unloads the least recently used idle models, and
// where none is idle it waits for one to become idle, up to the load timeout. An idle model
// unloads once its keep-alive has passed. A model with a request in flight is never unloaded
// here. The hosts do the loading and releasing (model-host.ts); this module decides when.
import { EngineError } from './errors.js';
import type { ModelHost } from './model-host.js';
import { DEFAULT_LOAD_TIMEOUT_MS, keepAliveOf, type EngineOptions } from './options.js';
import type { UnloadReason } from './protocol.js';

/** How long a model loaded for a request (the router resolves it first) is kept from eviction until that request reaches the engine. */
const CLAIM_MS = 5_000;
/** setTimeout's longest delay (about 24.8 days): longer keep-alives are re-armed. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class Residency {
  readonly keepAliveMs: number;
  readonly loadTimeoutMs: number;
  readonly #maxLoaded: number;
  readonly #budgetBytes: number;
  readonly #timers = new Map<ModelHost, ReturnType<typeof setTimeout>>();
  /** Each request's keep-alive as it ends: the last one to end sets the expiry. */
  readonly #keep = new Map<ModelHost, number>();
  /** Resolved (and replaced) whenever a model becomes idle, unloads or a load settles: waiters look again. */
  #changed = signal();

  constructor(
    private readonly hosts: () => Iterable<ModelHost>,
    options: EngineOptions,
  ) {
    this.keepAliveMs = keepAliveOf(options);
    this.loadTimeoutMs = options.loadTimeoutMs ?? DEFAULT_LOAD_TIMEOUT_MS;
    this.#maxLoaded = options.maxLoadedModels ?? Infinity;
    this.#budgetBytes = options.memoryBudgetMb !== undefined ? options.memoryBudgetMb * 2 ** 20 : Infinity;
  }

  /** Whether one more model may load at an eager start without evicting (the count only: sizes are not known yet). */
  roomAtStart(): boolean {
    return [...this.hosts()].filter((h) => h.resident).length < this.#maxLoaded;
  }

  /**
   * Makes the host ready and begins a request on it, in one step so nothing unloads it between
   * the two. Throws model_not_ready where it is starting, redeploying or failed (as an eager
   * engine always has), or once the load timeout passes.
   */
  async acquire(host: ModelHost): Promise<void> {
    await this.#ready(host);
    host.begin();
    this.#disarm(host);
  }

  /**
   * A request on the host ended: once none is left, its keep-alive (the request's, else the
   * server's) starts. An auxiliary step (admission's token count before the generation) keeps
   * the expiry the last request set and claims the model for the request that follows it.
   */
  release(host: ModelHost, keepAliveMs?: number, aux = false): void {
    host.end();
    if (aux) host.claimedUntil = Date.now() + CLAIM_MS;
    else this.#keep.set(host, keepAliveMs ?? this.keepAliveMs);
    if (host.requests === 0) this.#arm(host, this.#keep.get(host) ?? this.keepAliveMs);
    this.#notify();
  }

  /** Loads the host without a request (an admin load, or the router resolving a request's model): it expires after the server's keep-alive. */
  async load(host: ModelHost): Promise<void> {
    await this.#ready(host);
    // The request it was loaded for has not begun yet: keep it from eviction until it does.
    host.claimedUntil = Date.now() + CLAIM_MS;
    // The server's keep-alive from now on: an earlier request's (a `0`, say) was for that request.
    this.#keep.set(host, this.keepAliveMs);
    if (host.requests === 0) this.#arm(host, this.keepAliveMs);
  }

  /** An eager start's load has settled: an idle model's keep-alive starts now, as after a request. */
  started(host: ModelHost): void {
    if (host.loaded && host.requests === 0) this.#arm(host, this.keepAliveMs);
  }

  /** Unloads the host (waiting for its requests unless `force`). */
  async unload(host: ModelHost, reason: UnloadReason, opts: { force?: boolean } = {}): Promise<void> {
    this.#disarm(host);
    try {
      await host.unload(reason, opts);
    } finally {
      this.#notify();
    }
  }

  dispose(): void {
    for (const t of this.#timers.values()) clearTimeout(t);
    this.#timers.clear();
  }

  async #ready(host: ModelHost): Promise<void> {
    const deadline = Date.now() + this.loadTimeoutMs;
    let waitingFor = 'its load';
    for (;;) {
      if (host.status === 'ready' && host.loaded && !host.unloading) return;
      if (Date.now() > deadline) throw timedOut(host, this.loadTimeoutMs, waitingFor);
      if (host.status === 'failed' || host.status === 'starting' || host.status === 'redeploying') throw notReady(host);
      let next: Promise<unknown>;
      if (host.unloading) next = host.unloading;
      else if (host.loadingNow) next = host.ready;
      else {
        await Promise.all([...this.hosts()].map((h) => h.estimateBytes()));
        next = this.#makeRoomOrLoad(host, (why) => (waitingFor = why));
      }
      if (!(await before(next.catch(() => undefined), deadline))) throw timedOut(host, this.loadTimeoutMs, waitingFor);
    }
  }

  /**
   * In one synchronous step (so two loads cannot both take the last slot): starts the host's load
   * if it fits, else the unloads of the least recently used idle models that make it fit, else
   * (nothing idle enough) waits for a change. Returns what to wait for before looking again.
   */
  #makeRoomOrLoad(host: ModelHost, say: (why: string) => void): Promise<unknown> {
    // Between states (a load or an unload finishing): look again after a timer, never a resolved
    // promise, whose microtask loop would starve the very callbacks that finish the change.
    if (host.status !== 'unloaded' || host.loadingNow || host.unloading) return new Promise((r) => unref(setTimeout(r, 20)));
    const others = [...this.hosts()].filter((h) => h !== host && h.resident);
    let count = others.length + 1;
    let bytes = others.reduce((n, h) => n + (h.sizeBytes ?? 0), host.sizeBytes ?? 0);
    let left = others.length;
    // A model alone may load whatever the budget says: a budget below one model must not make it unservable.
    const over = () => count > this.#maxLoaded || (bytes > this.#budgetBytes && left > 0);
    const idle = others.filter((h) => h.status === 'ready' && !h.busy() && !h.unloading && !h.loadingNow).sort((a, b) => a.lastUsed - b.lastUsed);
    const victims: ModelHost[] = [];
    while (over() && idle.length) {
      const v = idle.shift()!;
      victims.push(v);
      count--;
      left--;
      bytes -= v.sizeBytes ?? 0;
    }
    if (over()) {
      say(`every loaded model is busy (${others.length} loaded; at most ${this.#maxLoaded === Infinity ? 'any' : this.#maxLoaded} models${this.#budgetBytes === Infinity ? '' : `, ${this.#budgetBytes / 2 ** 20} MiB`})`);
      return this.#changed.promise;
    }
    if (victims.length) return Promise.all(victims.map((v) => this.unload(v, 'evicted')));
    say('its load');
    const load = host.load();
    void load.finally(() => this.#notify());
    return load;
  }

  /** Unloads the host `ms` after now (0: at once; negative: never), unless a request begins first. */
  #arm(host: ModelHost, ms: number): void {
    this.#disarm(host);
    if (ms < 0 || !host.loaded) return;
    if (ms === 0 && host.claimedUntil <= Date.now()) {
      void this.unload(host, 'keep_alive').catch(() => undefined);
      return;
    }
    const at = Math.max(Date.now() + ms, host.claimedUntil);
    host.expiresAt = at;
    const fire = () => {
      this.#timers.delete(host);
      if (!host.loaded || host.expiresAt !== at) return;
      if (Date.now() < at) return void this.#timers.set(host, unref(setTimeout(fire, Math.min(at - Date.now(), MAX_TIMER_MS))));
      if (host.requests > 0) return; // its requests re-arm it as they end
      void this.unload(host, ms === 0 ? 'keep_alive' : 'idle').catch(() => undefined);
    };
    this.#timers.set(host, unref(setTimeout(fire, Math.min(at - Date.now(), MAX_TIMER_MS))));
  }

  #disarm(host: ModelHost): void {
    const t = this.#timers.get(host);
    if (t !== undefined) clearTimeout(t);
    this.#timers.delete(host);
    host.expiresAt = undefined;
  }

  #notify(): void {
    const s = this.#changed;
    this.#changed = signal();
    s.resolve();
  }
}

function signal(): { promise: Promise<void>; resolve: () => void } {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** Whether `p` settled before `deadline` (unix ms). */
async function before(p: Promise<unknown>, deadline: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((r) => (timer = unref(setTimeout(() => r(false), Math.max(0, deadline - Date.now())))));
  try {
    return await Promise.race([p.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** A timer that does not keep Node's event loop (or the worker) alive; browsers' timers have no unref. */
function unref<T>(t: T): T {
  (t as { unref?: () => void }).unref?.();
  return t;
}

function notReady(host: ModelHost): EngineError {
  const id = host.entry.id;
  const why = host.status === 'failed' ? `failed to load: ${host.detail}` : `is ${host.status}`;
  return new EngineError('model_not_ready', `The model \`${id}\` ${why}`, 'model', host.status === 'failed' ? 60 : 2);
}

function timedOut(host: ModelHost, ms: number, waitingFor: string): EngineError {
  const s = Math.round(ms / 100) / 10;
  return new EngineError('model_not_ready', `The model \`${host.entry.id}\` is not loaded yet: waited ${s} s for ${waitingFor}; retry shortly`, 'model', Math.max(1, Math.min(30, Math.ceil(ms / 2000))));
}
