import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

/** The folder holding Hearth's package.json: walks up from this file, which runs from
 * src/cli/ (tsx) or dist/src/cli/ (compiled). */
export function packageRoot(): string {
  if (cached) return cached;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return (cached = dir);
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`cannot find Hearth's package.json above ${fileURLToPath(import.meta.url)}`);
    dir = up;
  }
}

export function packageVersion(): string {
  try {
    return (JSON.parse(fs.readFileSync(path.join(packageRoot(), 'package.json'), 'utf8')) as { version?: string }).version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}
