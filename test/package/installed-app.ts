// A test file's temporary app (test/package/apps/<name>): packed Hearth installed into it in
// beforeAll, removed in afterAll, with what every such suite asks of it: skip when npm's cache
// cannot install it, a cache folder of its own, `npx hearth serve` stopped at the end, msw's
// copies in the tree, and node_modules/hearth's files as installed and now.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, type TestContext } from 'vitest';
import { appEnv, copyApp, installApp, packHearth, run, serveFromApp, snapshot, type AppName, type AppServer } from './apps.js';

export interface InstalledApp {
  readonly dir: string;
  readonly env: NodeJS.ProcessEnv;
  readonly cacheDir: string;
  /** Skips the test when the app could not be installed (said once, in beforeAll). */
  installed(ctx: TestContext): void;
  /** `npx hearth serve` in the app, stopped after the suite. */
  serve(): Promise<AppServer>;
  /** Where msw sits in the tree (`npm ls msw`), and the version of the app's own. */
  msw(): Promise<{ copies: string[]; version: string }>;
  /** node_modules/hearth's files (size and mtime) now, and as installed. */
  hearthFiles(): Map<string, string>;
  readonly installedHearthFiles: Map<string, string> | undefined;
}

export function useInstalledApp(name: AppName, node: string): InstalledApp {
  let dir = '';
  let env: NodeJS.ProcessEnv = {};
  let cacheDir = '';
  let notInstalled: string | undefined;
  let before: Map<string, string> | undefined;
  const servers: AppServer[] = [];

  beforeAll(async () => {
    dir = copyApp(name, await packHearth());
    notInstalled = await installApp(dir, node);
    if (notInstalled) console.warn(`[package tests] SKIPPED: ${notInstalled}`);
    cacheDir = mkdtempSync(join(tmpdir(), 'hearth-app-cache-'));
    env = appEnv(node, { HEARTH_CACHE_DIR: cacheDir });
    if (!notInstalled) before = snapshot(join(dir, 'node_modules/hearth'));
  }, 240_000);

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
    rmSync(cacheDir, { recursive: true, force: true });
  });

  return {
    get dir() {
      return dir;
    },
    get env() {
      return env;
    },
    get cacheDir() {
      return cacheDir;
    },
    installed(ctx) {
      if (notInstalled) ctx.skip();
    },
    async serve() {
      const server = await serveFromApp(dir, env);
      servers.push(server);
      return server;
    },
    async msw() {
      const r = await run('npm', ['ls', 'msw', '--all', '--parseable'], { cwd: dir, env });
      const version = (JSON.parse(readFileSync(join(dir, 'node_modules/msw/package.json'), 'utf8')) as { version: string }).version;
      return { copies: r.stdout.trim().split('\n'), version };
    },
    hearthFiles: () => snapshot(join(dir, 'node_modules/hearth')),
    get installedHearthFiles() {
      return before;
    },
  };
}
