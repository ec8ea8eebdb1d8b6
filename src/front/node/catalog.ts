import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { isHubId, parseCatalog } from '../../engine/catalog.js';
import { CatalogError } from '../../engine/catalog-errors.js';
import type { CatalogEntry } from '../../engine/protocol.js';
import { resolveCatalogSource } from '../../paths.js';
import { explainErrno } from './system-errors.js';

/**
 * Reads a catalog file. With `only`, keeps those ids (an unknown one is an error);
 * without, keeps every upstream entry and every local entry whose folder exists (hub
 * models are served only when named), so the default catalog serves whichever
 * fixtures have been written.
 * `label` names the file in errors: the flag that gave it ("--catalog x.json").
 */
export async function loadCatalog(file: string, only?: string[], label = `the catalog ${file}`): Promise<CatalogEntry[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new Error(`${label} cannot be read: ${explainErrno(err)}`);
  }
  let all: CatalogEntry[];
  try {
    all = parseCatalog(text, (s) => resolveCatalogSource(file, s));
  } catch (err) {
    throw err instanceof CatalogError ? new Error(`${label}: ${err.problems}`) : err;
  }
  if (!only?.length) return all.filter((e) => e.upstream || (!isHubId(e.source) && existsSync(e.source)));
  const unknown = only.filter((id) => !all.some((e) => e.id === id));
  if (unknown.length) {
    throw new Error(`--models: ${unknown.join(', ')} ${unknown.length > 1 ? 'are' : 'is'} not in ${label}; it lists ${all.map((e) => e.id).join(', ') || 'no models'}`);
  }
  return all.filter((e) => only.includes(e.id));
}

/** Every id a catalog file lists, whether or not its model is at hand. */
export async function catalogIds(file: string, label = `the catalog ${file}`): Promise<string[]> {
  const text = await readFile(file, 'utf8').catch((err) => {
    throw new Error(`${label} cannot be read: ${explainErrno(err)}`);
  });
  return parseCatalog(text, (s) => s).map((e) => e.id);
}

