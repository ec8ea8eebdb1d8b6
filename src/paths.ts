// Where Hearth reads and writes on disk, in Node. A checkout writes its fixtures into
// models/fixtures/; an installed package (under node_modules) never writes into its own
// folder: fixtures and hub downloads go to the user's cache folder instead. Keys, ledgers
// and incidents live in the data dir, which callers choose.
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

let root: string | undefined;

/** The folder holding Hearth's package.json: this file runs from src/ (tsx, vitest) or dist/src/ (built). */
export function packageRoot(): string {
  if (root) return root;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return (root = dir);
    const up = dirname(dir);
    if (up === dir) throw new Error(`cannot find Hearth's package.json above ${fileURLToPath(import.meta.url)}`);
    dir = up;
  }
}

export function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version?: string }).version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/** True when Hearth runs from an installed package rather than its own checkout. */
export const isInstalled = (): boolean => packageRoot().split(sep).includes('node_modules');

/** `HEARTH_CACHE_DIR`, else `$XDG_CACHE_HOME/hearth`, else `~/.cache/hearth`. */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.HEARTH_CACHE_DIR) return resolve(env.HEARTH_CACHE_DIR);
  return join(env.XDG_CACHE_HOME ? resolve(env.XDG_CACHE_HOME) : join(homedir(), '.cache'), 'hearth');
}

/** The fixture models: models/fixtures in a checkout; per Hearth version in the cache once installed,
 * since another version may build them differently. */
export function fixturesDir(): string {
  return isInstalled() ? join(cacheDir(), 'fixtures', packageVersion()) : join(packageRoot(), 'models', 'fixtures');
}

/** Where hub models download to. */
export const hubCacheDir = (): string => join(cacheDir(), 'hub');

/** The catalog that ships with Hearth; its `./fixtures/<name>` sources mean fixturesDir()'s folders. */
export const defaultCatalogFile = (): string => join(packageRoot(), 'models', 'catalog.json');

/** Resolves a catalog's local `source` against the catalog file's folder. */
export function resolveCatalogSource(catalogFile: string, source: string): string {
  const fixture = /^\.\/fixtures\/(.+)$/.exec(source);
  if (fixture && resolve(catalogFile) === defaultCatalogFile()) return join(fixturesDir(), fixture[1]!);
  return resolve(dirname(catalogFile), source);
}
