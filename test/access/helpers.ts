import { spawn } from 'node:child_process';
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

/**
 * A child process that opens the access layer with `openStore` (an expression, the src/
 * modules imported as in the child's script), holds up to `maxCostUsd` for a stream of
 * `key`'s account, reports 40 completion tokens delivered one by one (each 0.001 USD
 * more), waits until that has been written (a second), and is killed with SIGKILL.
 */
export async function streamThenKill(openStore: string, key: string, maxCostUsd = 0.75): Promise<void> {
  const script = `
    import { createAccess } from './src/access/access.js';
    import { openFileStore } from './src/access/file-store.js';
    import { openRedisStore } from './src/access/redis-store.js';
    const a = createAccess({ store: await ${openStore}, sandboxCapUsd: 1 });
    const p = await a.authenticate(${JSON.stringify('Bearer ' + key)});
    const hold = await a.reserve(p, { model: 'svc/tiny-chat', maxCostUsd: ${maxCostUsd} });
    for (let t = 1; t <= 40; t++) hold.delivered({ model: 'svc/tiny-chat', prompt_tokens: 5, completion_tokens: t, cost_usd: t / 1000 });
    setTimeout(() => process.stdout.write('delivered\\n'), 1300);
    setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: path.resolve(import.meta.dirname, '../..'),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => d.toString().includes('delivered') && resolve());
    child.on('exit', (code) => reject(new Error(`child exited with ${code}`)));
  });
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));
}
