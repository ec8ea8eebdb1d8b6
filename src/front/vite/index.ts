// hearth/vite: what an app's Vite build needs for `startHearth()` in its pages.
//   /mockServiceWorker.js   MSW's worker script, from the app's own msw
//   /ort/*                  onnxruntime-web's .wasm and .mjs files (never a CDN)
//   /models/*               catalog.json and the folders of its local models
// plus COOP/COEP on every response (WASM threads need cross-origin isolation), and the
// settings that let Vite bundle Hearth's engine worker out of node_modules. `vite` and
// `vite preview` serve these; `vite build` copies them into the output folder.
import { cpSync, createReadStream, existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, extname, join, normalize, resolve, sep } from 'node:path';
import type { Connect, Plugin, ResolvedConfig } from 'vite';
import { isHubId, parseCatalog } from '../../engine/catalog.js';
import type { CatalogEntry } from '../../engine/protocol.js';
import { defaultCatalogFile, isInstalled, resolveCatalogSource } from '../../paths.js';

export interface HearthViteOptions {
  /** A catalog.json whose models the pages may load (default: Hearth's own: the fixture models and
   * the hub entries). Local folders are served from disk; hub ids and upstreams stay as they are. */
  catalog?: string;
  /** Keep only these ids of the catalog (default: all of them). */
  models?: string[];
  /** COOP `same-origin` and COEP `require-corp` on every response (default true). */
  isolation?: boolean;
}

export const ISOLATION_HEADERS = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

const TYPES: Record<string, string> = {
  '.wasm': 'application/wasm',
  '.mjs': 'text/javascript',
  '.js': 'text/javascript',
  '.json': 'application/json',
  '.onnx': 'application/octet-stream',
};

/** What the engine worker imports: Vite pre-bundles them up front, since one found mid-run
 * makes it optimise again and reload the page. Hearth itself is left out of pre-bundling, or
 * its `new Worker(new URL(…, import.meta.url))` would point into Vite's cache folder.
 * protobufjs (CommonJS) reads and edits ONNX files at load (src/onnx/model-proto.ts). */
const WORKER_DEPS = ['comlink', 'onnxruntime-web', '@huggingface/transformers', '@mlc-ai/web-xgrammar', 'hono', 'zod', '@mswjs/interceptors/fetch', 'protobufjs/light.js'];
const PEER_DEPS = ['msw', 'msw/browser'];

const require = createRequire(import.meta.url);
const ortDir = () => dirname(require.resolve('onnxruntime-web/ort-wasm-simd-threaded.wasm'));
const ortFile = (name: string) => /^ort-wasm[\w.-]*\.(wasm|mjs)$/.test(name);

/** The catalog the pages read, with each local model's folder served at /models/<name>/. */
interface ServedCatalog {
  json: string;
  folders: Map<string, string>;
}

async function servedCatalog(opts: HearthViteOptions): Promise<ServedCatalog> {
  const file = resolve(opts.catalog ?? defaultCatalogFile());
  if (!opts.catalog) {
    const { writeFixtures } = await import('../../../models/index.js');
    await writeFixtures({ ifMissing: true });
  }
  let entries = parseCatalog(await readFile(file, 'utf8'), (s) => resolveCatalogSource(file, s));
  if (opts.models) {
    const missing = opts.models.filter((id) => !entries.some((e) => e.id === id));
    if (missing.length) throw new Error(`hearth/vite: ${missing.join(', ')} not in ${file}`);
    entries = entries.filter((e) => opts.models!.includes(e.id));
  }
  const folders = new Map<string, string>();
  const models: CatalogEntry[] = [];
  for (const e of entries) {
    if (e.upstream || isHubId(e.source)) {
      models.push(e);
      continue;
    }
    if (!existsSync(e.source)) {
      if (opts.models) throw new Error(`hearth/vite: ${e.id}'s folder ${e.source} does not exist`);
      continue; // Hearth's own catalog lists fixtures that only some presets write
    }
    let name = e.id.replace(/^svc\//, '').replace(/[^\w.-]/g, '_');
    while (folders.has(name)) name += '_';
    folders.set(name, e.source);
    models.push({ ...e, source: `./${name}/` });
  }
  return { json: JSON.stringify({ models }, null, 2), folders };
}

/** Serves the files of `dir` at `prefix`, those `allow` accepts. */
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

function middlewares(opts: HearthViteOptions, catalog: Promise<ServedCatalog>): Connect.NextHandleFunction[] {
  const worker = require.resolve('msw/mockServiceWorker.js');
  const list: Connect.NextHandleFunction[] = [];
  if (opts.isolation !== false) {
    list.push((_req, res, next) => {
      for (const [k, v] of Object.entries(ISOLATION_HEADERS)) res.setHeader(k, v);
      next();
    });
  }
  list.push(staticFiles('/', dirname(worker), (rel) => rel === 'mockServiceWorker.js'));
  list.push(staticFiles('/ort/', ortDir(), ortFile));
  list.push((req, res, next) => {
    const path = (req.url ?? '').split('?')[0]!;
    if (!path.startsWith('/models/')) return next();
    catalog.then((c) => {
      if (path === '/models/catalog.json') {
        res.setHeader('Content-Type', 'application/json');
        res.setHeader('Cache-Control', 'no-cache');
        return res.end(c.json);
      }
      const [, , name] = path.split('/');
      const dir = c.folders.get(decodeURIComponent(name ?? ''));
      if (!dir) return next();
      staticFiles(`/models/${name}/`, dir, () => true)(req, res, next);
    }, next);
  });
  return list;
}

/** Copies what the middlewares serve into the build's output folder, for a static host. */
async function copyInto(outDir: string, catalog: ServedCatalog): Promise<void> {
  cpSync(require.resolve('msw/mockServiceWorker.js'), join(outDir, 'mockServiceWorker.js'));
  mkdirSync(join(outDir, 'ort'), { recursive: true });
  cpSync(ortDir(), join(outDir, 'ort'), { recursive: true, filter: (src) => statSync(src).isDirectory() || ortFile(src.split(sep).pop()!) });
  mkdirSync(join(outDir, 'models'), { recursive: true });
  writeFileSync(join(outDir, 'models', 'catalog.json'), catalog.json);
  for (const [name, dir] of catalog.folders) cpSync(dir, join(outDir, 'models', name), { recursive: true });
}

/** The Vite plugin: `plugins: [hearth()]` in the app's vite.config, then `await startHearth()` in its page. */
export function hearth(options: HearthViteOptions = {}): Plugin {
  let catalog: Promise<ServedCatalog> | undefined;
  const served = () => (catalog ??= servedCatalog(options));
  let config: ResolvedConfig | undefined;
  const nested = (dep: string) => (isInstalled() ? `hearth > ${dep}` : dep);
  return {
    name: 'hearth',
    config: () => ({
      worker: { format: 'es' },
      optimizeDeps: { exclude: ['hearth'], include: [...PEER_DEPS, ...WORKER_DEPS.map(nested)] },
    }),
    configResolved(resolved) {
      config = resolved;
    },
    async configureServer(server) {
      await served();
      for (const fn of middlewares(options, served())) server.middlewares.use(fn);
    },
    configurePreviewServer(server) {
      for (const fn of middlewares(options, served())) server.middlewares.use(fn);
    },
    async writeBundle() {
      if (!config || config.build.ssr) return;
      await copyInto(resolve(config.root, config.build.outDir), await served());
    },
  };
}

export default hearth;
