// Where a worker thread's entry is. Compiled, modules sit under dist/src/engine/… and the
// workers under dist/worker/. Run from source (vitest, tsx), a worker is TypeScript: a small
// bootstrap registers tsx's loader inside the worker first (Node 20 does not pass `--import`
// hooks on to workers, nor does a worker pass them on to the workers it starts).
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

/** worker/<name>.ts or .js, for a module (`from`: its import.meta.url) three folders below the root. */
export function workerFile(name: string, from: string): URL {
  return new URL(`../../../worker/${name}.${from.endsWith('.ts') ? 'ts' : 'js'}`, from);
}

/** What `new Worker()` takes to run `file`: the file itself, or for TypeScript a bootstrap to eval. */
export function workerScript(file: URL): { entry: URL | string; eval: boolean } {
  if (!file.pathname.endsWith('.ts')) return { entry: file, eval: false };
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api')).href.replace(/\.cjs$/, '.mjs');
  return { entry: `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(file.href)}); })`, eval: true };
}
