// The demo's Vite configuration, shared by `npm run demo` (vite.config.ts) and the
// browser tests (which start a dev server with it). It serves:
//   /              the demo app (demo/)
//   /ort/*         onnxruntime-web's runtime files from node_modules (never a CDN)
//   /models/*      models/catalog.json and the fixture folders (written if missing)
// and sends COOP/COEP on every response, so the page is cross-origin isolated and
// onnxruntime-web can use WASM threads.
import { createReadStream, existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Connect, Plugin, UserConfig } from 'vite';

const here = dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = resolve(here, '..');
const MODELS_DIR = join(REPO_ROOT, 'models');
const ORT_DIST = dirname(createRequire(import.meta.url).resolve('onnxruntime-web/ort-wasm-simd-threaded.wasm'));

const TYPES: Record<string, string> = {
  '.wasm': 'application/wasm',
  '.mjs': 'text/javascript',
  '.js': 'text/javascript',
  '.json': 'application/json',
  '.onnx': 'application/octet-stream',
};

export const ISOLATION_HEADERS = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

/** Serves files under `dir` at `prefix`, only those `allow` accepts. */
function staticFiles(prefix: string, dir: string, allow: (rel: string) => boolean): Connect.NextHandleFunction {
  return (req, res, next) => {
    const path = decodeURIComponent((req.url ?? '').split('?')[0]!);
    if (!path.startsWith(prefix)) return next();
    const rel = normalize(path.slice(prefix.length));
    const file = join(dir, rel);
    if (rel.startsWith('..') || !file.startsWith(dir + sep) || !allow(rel.split(sep).join('/'))) return next();
    if (!existsSync(file) || !statSync(file).isFile()) {
      res.statusCode = 404;
      return res.end('not found');
    }
    res.setHeader('Content-Type', TYPES[extname(file)] ?? 'application/octet-stream');
    res.setHeader('Content-Length', String(statSync(file).size));
    res.setHeader('Cache-Control', 'no-cache');
    if (req.method === 'HEAD') return res.end();
    createReadStream(file).pipe(res);
  };
}

export interface DemoOptions {
  /** Tests: return false to answer a request with 503 instead (a network that refuses). */
  gate?: (url: string) => boolean;
}

export function hearthDemoPlugin(opts: DemoOptions = {}): Plugin {
  const middlewares = (use: (fn: Connect.NextHandleFunction) => void) => {
    use((req, res, next) => {
      for (const [k, v] of Object.entries(ISOLATION_HEADERS)) res.setHeader(k, v);
      if (opts.gate && !opts.gate(req.url ?? '/')) {
        res.statusCode = 503;
        return res.end('refused by the test gate');
      }
      next();
    });
    use(staticFiles('/ort/', ORT_DIST, (rel) => /^ort-wasm[\w.-]*\.(wasm|mjs)$/.test(rel)));
    use(staticFiles('/models/', MODELS_DIR, (rel) => rel === 'catalog.json' || rel.startsWith('fixtures/')));
  };
  return {
    name: 'hearth-demo',
    async configureServer(server) {
      const { writeFixtures } = await import('../models/index.js');
      await writeFixtures({ ifMissing: true });
      middlewares((fn) => server.middlewares.use(fn));
    },
    configurePreviewServer(server) {
      middlewares((fn) => server.middlewares.use(fn));
    },
  };
}

/** The demo app's Vite config (root demo/). */
export function demoConfig(opts: DemoOptions = {}): UserConfig {
  return {
    root: here,
    publicDir: join(here, 'public'),
    appType: 'mpa',
    plugins: [hearthDemoPlugin(opts)],
    server: { fs: { allow: [REPO_ROOT] } },
    worker: { format: 'es' },
    optimizeDeps: {
      entries: [join(here, 'index.html'), join(REPO_ROOT, 'worker/browser.ts')],
      include: ['msw/browser', 'msw', '@mswjs/interceptors/fetch', 'openai', 'comlink', 'onnxruntime-web', '@huggingface/transformers', 'hono', 'zod'],
    },
    build: { outDir: join(REPO_ROOT, 'dist/demo'), emptyOutDir: true, target: 'es2022' },
    logLevel: 'info',
  };
}
