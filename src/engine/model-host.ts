import type { Backend } from '../backends/types.js';
import { CausalLM } from './models/causal-lm.js';
import { Encoder } from './models/encoder.js';
import type { CatalogEntry, ModelState, ModelStatus } from './protocol.js';
import type { EngineOptions } from './engine.js';
import { PrefixCache } from './kv/prefix-cache.js';
import { Scheduler } from './scheduler.js';

export const DEFAULT_KV_CACHE_MB = 256;
import { TextCodec } from './text/codec.js';

/** Everything that serves one catalog entry once it is ready. */
export interface LoadedModel {
  codec: TextCodec;
  lm?: CausalLM;
  scheduler?: Scheduler;
  encoder?: Encoder;
}

/**
 * One model's lifecycle: starting → ready, or failed with the reason.
 * (redeploying comes with the model-operations work.)
 */
export class ModelHost {
  status: ModelStatus = 'starting';
  detail?: string;
  loaded?: LoadedModel;
  readonly created = Math.floor(Date.now() / 1000);
  readonly ready: Promise<void>;

  constructor(
    readonly entry: CatalogEntry,
    backend: Backend,
    private readonly options: EngineOptions = {},
  ) {
    this.ready = this.load(backend).then(
      (m) => {
        this.loaded = m;
        this.status = 'ready';
      },
      (e: unknown) => {
        this.status = 'failed';
        this.detail = e instanceof Error ? e.message : String(e);
      },
    );
  }

  state(): ModelState {
    const { id, task, context_length, owned_by } = this.entry;
    return {
      id,
      task,
      class: this.entry.class,
      context_length,
      status: this.status,
      created: this.created,
      owned_by: owned_by ?? 'hearth',
      ...(this.detail ? { detail: this.detail } : {}),
    };
  }

  private async load(backend: Backend): Promise<LoadedModel> {
    const folder = this.entry.source;
    if (!(await backend.exists(folder))) {
      throw new Error(`${this.entry.id}: model folder ${folder} does not exist (run \`npm run models\` for the fixtures)`);
    }
    const codec = await TextCodec.load(folder, { localOnly: true });
    if (this.entry.task === 'embedding') {
      return { codec, encoder: await Encoder.load(backend, folder, this.entry) };
    }
    const lm = await CausalLM.load(backend, folder, this.entry);
    const mb = this.options.kvCacheMb ?? DEFAULT_KV_CACHE_MB;
    const prefixCache = mb > 0 ? new PrefixCache(lm.kvShape, mb * 2 ** 20) : undefined;
    return { codec, lm, scheduler: new Scheduler(lm, { prefixCache }) };
  }

  async dispose(): Promise<void> {
    await this.ready;
    await this.loaded?.lm?.dispose();
    await this.loaded?.encoder?.dispose();
  }
}
