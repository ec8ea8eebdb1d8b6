// The catalog entry for a model added with an upstream (admin route or CLI):
// nothing to read from a checkpoint, so what is not given takes a default.
import { upstreamSource } from '../engine/catalog.js';
import type { CatalogEntry, ModelTask } from '../engine/protocol.js';
import type { UpstreamSpec } from './types.js';

export const DEFAULT_UPSTREAM_CONTEXT = 32_768;

export interface UpstreamAdd {
  id: string;
  upstream: UpstreamSpec;
  task?: ModelTask;
  context_length?: number;
  class?: string;
  price?: CatalogEntry['price'];
}

export function upstreamEntry(req: UpstreamAdd): CatalogEntry {
  return {
    id: req.id,
    task: req.task ?? 'chat',
    class: req.class ?? 'upstream',
    context_length: req.context_length ?? DEFAULT_UPSTREAM_CONTEXT,
    source: upstreamSource(req.upstream),
    upstream: req.upstream,
    price: req.price ?? { input_per_1m: 0, output_per_1m: 0 },
  };
}
