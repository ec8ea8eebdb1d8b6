import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package's root: the nearest folder with a package.json above this file
 * (this file runs from src/ under vitest and from dist/src/ once built). */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('cannot find the hearth package root');
    dir = up;
  }
  return dir;
}

export const defaultCatalogFile = (): string => join(packageRoot(), 'models', 'catalog.json');
