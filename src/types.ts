import type { Access } from './access/types.js';
import type { CatalogEntry, EngineApi } from './engine/protocol.js';

/** What the router needs from the runtime it serves. Built by createRuntime (Node)
 * or the in-page starter (browser); the router does not care which. */
export interface Runtime {
  engine: EngineApi;
  access: Access;
  /** The catalog entries being served, for prices and metadata. */
  catalog(): CatalogEntry[];
  close(): Promise<void>;
}

export interface RouterOptions {
  /** Largest request body accepted, in bytes (default 1 MiB). */
  maxBodyBytes?: number;
  /** Prefix the OpenAI routes are mounted under (default "/v1"). */
  basePath?: string;
}
