// Opening the access store for CLI commands.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { createAccess, type HearthAccess } from '../access/access.js';
import { ACCESS_LOG } from '../access/file-store.js';
import { createMemoryStore } from '../access/memory-store.js';
import { openStore } from '../access/open-store.js';
import { DEFAULT_DATA_DIR } from '../front/node/options.js';
import { CliError } from './errors.js';

export interface StoreFlags {
  'data-dir'?: string;
  store?: string;
}

export function dataDirOf(flags: StoreFlags): string {
  return path.resolve(flags['data-dir'] ?? DEFAULT_DATA_DIR);
}

/** `readOnly`: a file store that does not exist yet is not created (nothing to show). */
export async function openAccess(flags: StoreFlags, opts: { readOnly?: boolean } = {}): Promise<HearthAccess> {
  const dir = dataDirOf(flags);
  const spec = flags.store ?? 'file';
  if (opts.readOnly && spec === 'file' && !fs.existsSync(path.join(dir, ACCESS_LOG))) {
    return createAccess({ store: createMemoryStore() });
  }
  try {
    return createAccess({ store: await openStore(spec, dir) });
  } catch (err) {
    throw new CliError((err as Error).message);
  }
}
