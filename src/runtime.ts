import type { Access } from './access/types.js';
import type { CatalogEntry, EngineApi } from './engine/protocol.js';
import type { Runtime } from './types.js';

export interface RuntimeOptions {
  engine: EngineApi & { terminate?: () => Promise<void> };
  access: Access;
  catalog: CatalogEntry[];
}

/**
 * Ties an engine (in whatever worker the front door started), an access layer and
 * the catalog together, and starts loading the models. Runtime-agnostic: the Node
 * server, the MSW handlers and the in-page starter all build theirs here.
 */
/** Resolves once no model is still starting (each is ready or failed). */
export async function modelsSettled(engine: EngineApi, pollMs = 50): Promise<void> {
  while ((await engine.models()).some((m) => m.status === 'starting')) {
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

export function createRuntime({ engine, access, catalog }: RuntimeOptions): Runtime {
  let entries = [...catalog];
  void engine.load(entries);
  return {
    engine,
    access,
    catalog: () => entries,
    async close() {
      entries = [];
      await (engine.terminate ? engine.terminate() : engine.dispose());
      await access.close();
    },
  };
}
