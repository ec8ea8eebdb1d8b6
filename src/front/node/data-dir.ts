import * as fs from 'node:fs';
import * as path from 'node:path';
import { errnoOf, explainErrno } from './system-errors.js';

/**
 * Makes sure the data dir is a writable folder, creating it and missing parents, and
 * returns its absolute path; otherwise throws an Error naming it and saying why.
 * Folders are created one level at a time: Node's recursive mkdir never returns where
 * a parent refuses new entries with ENOENT (under /proc, say). With `create: false`
 * (commands that only read) a missing folder is fine and nothing is created.
 */
export function prepareDataDir(dir: string, { create = true } = {}): string {
  const abs = path.resolve(dir);
  const missing: string[] = [];
  for (let p = abs; ; ) {
    let stat: fs.Stats | undefined;
    try {
      stat = fs.statSync(p);
    } catch (err) {
      const code = errnoOf(err);
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw new Error(`--data-dir ${abs} cannot be used: ${explainErrno(err)}`);
    }
    if (stat && !stat.isDirectory()) {
      throw new Error(
        p === abs
          ? `--data-dir ${abs} is a file, not a folder: pass a folder (it is created if missing)`
          : `--data-dir ${abs} cannot be created: ${p} is a file, not a folder`,
      );
    }
    if (stat) break;
    missing.unshift(p);
    const up = path.dirname(p);
    if (up === p) break;
    p = up;
  }
  if (!create) return abs;
  for (const p of missing) {
    try {
      fs.mkdirSync(p, { mode: 0o700 });
    } catch (err) {
      if (errnoOf(err) !== 'EEXIST') throw new Error(`--data-dir ${abs} cannot be created: ${explainErrno(err)} at ${p}`);
    }
  }
  try {
    fs.accessSync(abs, fs.constants.W_OK | fs.constants.X_OK);
  } catch (err) {
    throw new Error(`--data-dir ${abs} is not writable: ${explainErrno(err)}`);
  }
  return abs;
}
