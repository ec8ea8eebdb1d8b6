import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { EngineError } from '../errors.js';
import type { Device, EngineApi } from '../protocol.js';
import { Comlink, nodeEndpoint } from '../rpc.js';
import { forwardEngine, ServedModels } from './forward.js';

export interface NodeEngine extends Required<EngineApi> {
  /** Stops the worker thread. */
  terminate(): Promise<void>;
}

/**
 * Starts the engine in a worker thread and returns its API. Calls in flight when
 * the worker dies fail with `engine_crashed`, and a fresh worker is started that
 * loads the same models again, so the next request finds a working engine.
 */
export function startNodeEngine(opts: { device?: Device; kvCacheMb?: number; hubCacheDir?: string } = {}): NodeEngine {
  const device = opts.device ?? 'cpu';
  const served = new ServedModels();
  let closing = false;
  const pending = new Set<(e: Error) => void>();
  let current = spawn();

  function spawn() {
    const worker = new Worker(workerEntry(), { workerData: { device, kvCacheMb: opts.kvCacheMb, hubCacheDir: opts.hubCacheDir }, eval: fromSource });
    const api = Comlink.wrap<EngineApi>(nodeEndpoint(worker));
    worker.unref();
    worker.on('error', () => undefined); // reported through 'exit'
    worker.once('exit', () => {
      if (closing) return;
      const crash = new EngineError('engine_crashed', 'The engine worker stopped unexpectedly; it is being restarted');
      for (const reject of pending) reject(crash);
      pending.clear();
      current = spawn();
      if (served.entries.length) void current.api.load(served.entries);
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

  return {
    ...forwardEngine(call, served),
    async terminate() {
      await call((api) => api.dispose()).catch(() => undefined);
      closing = true;
      await current.worker.terminate();
    },
  };
}

// Compiled, this file sits at dist/src/engine/client/ and the worker at dist/worker/.
// Run from source (vitest, tsx), the worker is TypeScript: a small bootstrap
// registers tsx's loader inside the worker first (Node 20 does not pass `--import`
// hooks on to workers).
const fromSource = import.meta.url.endsWith('.ts');

function workerEntry(): URL | string {
  const url = new URL(`../../../worker/node.${fromSource ? 'ts' : 'js'}`, import.meta.url);
  if (!fromSource) return url;
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api')).href.replace(/\.cjs$/, '.mjs');
  return `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(url.href)}); })`;
}
