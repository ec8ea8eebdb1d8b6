import { Worker } from 'node:worker_threads';
import { EngineError } from '../errors.js';
import type { Device, EngineApi } from '../protocol.js';
import type { SpeculativeMode } from '../spec/draft-policy.js';
import { residencyOf, type ResidencyOptions } from '../options.js';
import { Comlink, nodeEndpoint } from '../rpc.js';
import { workerFile, workerScript } from '../worker-script.js';
import { forwardEngine, ServedModels } from './forward.js';

export interface NodeEngine extends Required<EngineApi> {
  /**
   * Stops the worker thread: asks the engine to dispose of its models, and ends the thread
   * once that is done or `graceMs` have passed (default 2 s), whatever it is doing then
   * (terminate() interrupts a long WASM call too). Calls still in flight fail.
   */
  terminate(graceMs?: number): Promise<void>;
}

export type { ResidencyOptions };

export interface NodeEngineOptions extends ResidencyOptions {
  device?: Device;
  kvCacheMb?: number;
  /** The most pixels an image may have (default 50,000,000). */
  maxImagePixels?: number;
  /** Speculative decoding where a catalog entry does not say (default 'ngram'). */
  speculative?: SpeculativeMode;
  /** CPU threads of each graph run (default: onnxruntime's, one per core). */
  threads?: number;
  hubCacheDir?: string;
  /** Milliseconds one grammar may take to compile (default: GRAMMAR_LIMITS.compileMs). */
  grammarCompileMs?: number;
  /** Told when the worker dies, with its cause: the server logs it (default: one line on stderr). */
  onCrash?: (cause: Error | undefined, exitCode: number) => void;
  /** The worker's entry (default worker/node): tests run the real one inside a wrapper of theirs. */
  workerFile?: URL;
}

/** How long a restarted engine asks clients to wait (its models load again first). */
const RESTART_RETRY_S = 5;
const DEFAULT_GRACE_MS = 2_000;

/**
 * Starts the engine in a worker thread and returns its API. Calls in flight when
 * the worker dies fail with `engine_crashed` (a 503 with retry-after), the cause is
 * reported to `onCrash`, and a fresh worker is started that loads the same models
 * again, so the next request finds a working engine.
 */
export function startNodeEngine(opts: NodeEngineOptions = {}): NodeEngine {
  const device = opts.device ?? 'cpu';
  const served = new ServedModels();
  const onCrash = opts.onCrash ?? ((cause, code) => console.error(`hearth: the engine worker stopped (exit code ${code}): ${cause?.stack ?? cause?.message ?? 'no error was reported'}; restarting it`));
  let closing = false;
  const pending = new Set<(e: Error) => void>();
  let current = spawn();

  function spawn() {
    const script = workerScript(opts.workerFile ?? workerFile('node', import.meta.url));
    const workerData = { device, kvCacheMb: opts.kvCacheMb, maxImagePixels: opts.maxImagePixels, speculative: opts.speculative, threads: opts.threads, hubCacheDir: opts.hubCacheDir, grammarCompileMs: opts.grammarCompileMs, residency: residencyOf(opts) };
    const worker = new Worker(script.entry, { workerData, eval: script.eval });
    const api = Comlink.wrap<EngineApi>(nodeEndpoint(worker));
    worker.unref();
    let cause: Error | undefined;
    // An uncaught exception or unhandled rejection in the worker: it exits next.
    worker.on('error', (e) => (cause = e instanceof Error ? e : new Error(String(e))));
    worker.once('exit', (code) => {
      if (closing) return;
      try {
        onCrash(cause, code);
      } catch {
        // a logger must not stop the restart
      }
      const crash = new EngineError('engine_crashed', 'The engine stopped unexpectedly and is restarting; retry shortly', null, RESTART_RETRY_S);
      for (const reject of pending) reject(crash);
      pending.clear();
      current = spawn();
      if (served.entries.length) void current.api.load(served.entries).catch(() => undefined);
    });
    return { worker, api };
  }

  /**
   * Runs a call on the current worker, failing it if the worker dies meanwhile.
   * The worker keeps the process alive only while a call is in flight, so a test
   * suite using the MSW handlers can exit without closing them.
   */
  function call<T>(fn: (api: Comlink.Remote<EngineApi>) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (closing) return reject(new EngineError('model_not_ready', 'The engine is shutting down', null, RESTART_RETRY_S));
      pending.add(reject);
      current.worker.ref();
      fn(current.api)
        .then(resolve, reject)
        .finally(() => {
          pending.delete(reject);
          if (pending.size === 0) current.worker.unref();
        });
    });
  }

  let terminated: Promise<void> | undefined;
  return {
    ...forwardEngine(call, served),
    terminate(graceMs = DEFAULT_GRACE_MS) {
      return (terminated ??= (async () => {
        const disposed = call((api) => api.dispose()).catch(() => undefined);
        closing = true;
        // A worker busy in a long synchronous call never answers dispose: the grace ends it.
        let timer: ReturnType<typeof setTimeout> | undefined;
        const grace = new Promise<void>((r) => (timer = setTimeout(r, Math.max(0, graceMs))));
        await Promise.race([disposed, grace]);
        clearTimeout(timer);
        const stopped = new EngineError('model_not_ready', 'The engine is shutting down', null, RESTART_RETRY_S);
        for (const reject of pending) reject(stopped);
        pending.clear();
        await current.worker.terminate();
      })());
    },
  };
}
