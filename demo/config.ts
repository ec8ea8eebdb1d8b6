// The demo's Vite configuration, shared by `npm run demo` (vite.config.ts) and the
// browser tests (which start a dev server with it). The demo is served as any app
// would serve Hearth: through the `hearth/vite` plugin (MSW's worker script,
// onnxruntime-web's files, the catalog and fixture models, COOP/COEP).
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hearth } from 'hearth/vite';
import type { UserConfig } from 'vite';

const here = dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = resolve(here, '..');

/** The demo app's Vite config (root demo/). */
export function demoConfig(): UserConfig {
  return {
    root: here,
    publicDir: false,
    appType: 'mpa',
    plugins: [hearth()],
    server: { fs: { allow: [REPO_ROOT] } },
    optimizeDeps: {
      // The demo imports Hearth's sources, so Vite finds the worker's imports from its entry.
      entries: [join(here, 'index.html'), join(REPO_ROOT, 'worker/browser.ts')],
      include: ['openai'],
    },
    build: { outDir: join(REPO_ROOT, 'dist/demo'), emptyOutDir: true, target: 'es2022' },
    logLevel: 'info',
  };
}
