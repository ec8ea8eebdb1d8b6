// Choosing a store from `--store` (Node only: it may open files).

import type { AccessStore } from './store.js';
import { createMemoryStore } from './memory-store.js';
import { openFileStore } from './file-store.js';

/** `spec`: "file" (default: `<dataDir>/access.jsonl`), "memory", or a redis:// URL. */
export async function openStore(spec: string | undefined, dataDir: string): Promise<AccessStore> {
  const s = (spec ?? 'file').trim();
  if (s === 'file') return openFileStore(dataDir);
  if (s === 'memory') return createMemoryStore();
  if (/^rediss?:\/\//i.test(s)) {
    // Where the redis store will plug in (shared keys, limits and spend across servers).
    let shown = s;
    try {
      const u = new URL(s);
      u.username = '';
      u.password = '';
      shown = u.toString();
    } catch {
      shown = 'redis://…';
    }
    throw new Error(`the redis store is not yet supported (--store ${shown}); use --store file or --store memory`);
  }
  throw new Error(`unknown store "${s}": expected file, memory or a redis:// URL`);
}
