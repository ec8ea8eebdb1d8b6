import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { isHubId, parseCatalog } from '../../engine/catalog.js';
import type { CatalogEntry } from '../../engine/protocol.js';

/**
 * Reads a catalog file. With `only`, keeps those ids (an unknown one is an error);
 * without, keeps every upstream entry and every local entry whose folder exists (hub
 * models are served only when named), so the default catalog serves whichever
 * fixtures have been written.
 */
export async function loadCatalog(file: string, only?: string[]): Promise<CatalogEntry[]> {
  const all = parseCatalog(await readFile(file, 'utf8'), (s) => resolve(dirname(file), s));
  if (!only?.length) return all.filter((e) => e.upstream || (!isHubId(e.source) && existsSync(e.source)));
  const unknown = only.filter((id) => !all.some((e) => e.id === id));
  if (unknown.length) throw new Error(`not in the catalog ${file}: ${unknown.join(', ')}`);
  return all.filter((e) => only.includes(e.id));
}
