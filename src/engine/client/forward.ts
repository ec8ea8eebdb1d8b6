import type { CatalogEntry, EngineApi } from '../protocol.js';
import { Comlink, generateInOrder, transcribeInOrder } from '../rpc.js';

/** Runs one call on the live worker (each client supervises its own). */
export type WorkerCall = <T>(fn: (api: Comlink.Remote<EngineApi>) => Promise<T>) => Promise<T>;

/** What a worker serves, kept current so a replacement worker loads the same models. */
export class ServedModels {
  entries: CatalogEntry[] = [];

  put(list: CatalogEntry[]): void {
    this.entries = [...this.entries.filter((e) => !list.some((n) => n.id === e.id)), ...list];
  }

  drop(id: string): void {
    this.entries = this.entries.filter((e) => e.id !== id);
  }
}

/** The engine API over a worker, the same for the Node and the browser clients. */
export function forwardEngine(call: WorkerCall, served: ServedModels): Required<EngineApi> {
  // The worker's engine has every optional operation.
  const ops = (api: Comlink.Remote<EngineApi>) => api as unknown as Comlink.Remote<Required<EngineApi>>;
  return {
    load: (list) => {
      served.put(list);
      return call((api) => api.load(list));
    },
    models: () => call((api) => api.models()),
    generate: (req, onToken) => call((api) => generateInOrder(api, req, onToken)),
    cancel: (id) => call((api) => api.cancel(id)),
    embed: (req) => call((api) => api.embed(req)),
    score: (req) => call((api) => api.score(req)),
    transcribe: (req, onDelta) => call((api) => transcribeInOrder(api, req, onDelta)),
    countTokens: (req) => call((api) => ops(api).countTokens(req)),
    tokenize: (req) => call((api) => ops(api).tokenize(req)),
    detokenize: (req) => call((api) => ops(api).detokenize(req)),
    dispose: () => call((api) => api.dispose()),
    add: (entry) =>
      call((api) => ops(api).add(entry)).then((state) => {
        served.put([entry]);
        return state;
      }),
    remove: (id) => call((api) => ops(api).remove(id)).then(() => served.drop(id)),
    redeploy: (id, entry) =>
      call((api) => ops(api).redeploy(id, entry)).then((state) => {
        if (entry) served.put([entry]);
        return state;
      }),
    stats: () => call((api) => ops(api).stats()),
    loadModel: (id) => call((api) => ops(api).loadModel(id)),
    unloadModel: (id, opts) => call((api) => ops(api).unloadModel(id, opts)),
  };
}
