// Choosing a store from `--store` (Node only: it may open files).

import type { AccessStore } from './store.js';
import { createMemoryStore } from './memory-store.js';
import { openFileStore } from './file-store.js';
import { openRedisStore } from './redis-store.js';

/** `spec`: "file" (default: `<dataDir>/access.jsonl`), "memory", or a redis:// (rediss://)
 * URL such as `redis://:password@host:6379/0`. Errors never show the URL's password. */
export async function openStore(spec: string | undefined, dataDir: string): Promise<AccessStore> {
  const s = (spec ?? 'file').trim();
  if (s === 'file') return openFileStore(dataDir);
  if (s === 'memory') return createMemoryStore();
  if (/^rediss?:\/\//i.test(s)) return openRedisStore(s);
  throw new Error(`unknown store "${s}": expected file, memory or a redis:// URL`);
}
