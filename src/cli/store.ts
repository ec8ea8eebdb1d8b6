// The data dir and the access store of CLI commands.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { createAccess, type HearthAccess } from '../access/access.js';
import { ACCESS_LOG } from '../access/file-store.js';
import { createMemoryStore } from '../access/memory-store.js';
import { openStore } from '../access/open-store.js';
import { prepareDataDir } from '../front/node/data-dir.js';
import { DEFAULT_DATA_DIR } from '../front/node/options.js';
import { CliError } from './errors.js';

export interface StoreFlags {
  'data-dir'?: string;
  store?: string;
}

/** The absolute data dir, checked to be a folder (or missing); `create`: made if missing,
 * and checked to be writable (for commands that write there). */
export function dataDirOf(flags: StoreFlags, opts: { create?: boolean } = {}): string {
  return prepareDataDir(flags['data-dir'] ?? DEFAULT_DATA_DIR, { create: opts.create ?? false });
}

/** `readOnly`: a file store that does not exist yet is not created (nothing to show). */
export async function openAccess(flags: StoreFlags, opts: { readOnly?: boolean } = {}): Promise<HearthAccess> {
  const spec = flags.store ?? 'file';
  const dir = spec === 'file' ? dataDirOf(flags, { create: !opts.readOnly }) : path.resolve(flags['data-dir'] ?? DEFAULT_DATA_DIR);
  if (opts.readOnly && spec === 'file' && !fs.existsSync(path.join(dir, ACCESS_LOG))) {
    return createAccess({ store: createMemoryStore() });
  }
  try {
    return createAccess({ store: await openStore(spec, dir) });
  } catch (err) {
    throw new CliError((err as Error).message);
  }
}
