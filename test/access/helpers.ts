import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll } from 'vitest';

const dirs: string[] = [];

/** A fresh temporary directory, removed after the file's tests. */
export function tempDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-access-'));
  if (!dirs.length) afterAll(() => {
    for (const x of dirs.splice(0)) fs.rmSync(x, { recursive: true, force: true });
  });
  dirs.push(d);
  return d;
}

/** Every file under `dir`, recursively. */
export function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name));
}
