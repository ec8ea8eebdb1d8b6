// Real headless Chromium (Debian's, through playwright-core; never a downloaded
// browser) against the demo served by Vite's dev server, as `npm run demo` serves it.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { createServer, type Plugin, type ViteDevServer } from 'vite';
import { afterAll, beforeAll } from 'vitest';
import { demoConfig, REPO_ROOT } from '../../demo/config.js';

const CANDIDATES = ['/usr/lib/chromium/chromium', '/usr/bin/chromium', '/usr/bin/chromium-browser'];
export const CHROMIUM = process.env.HEARTH_CHROMIUM ?? CANDIDATES.find((p) => existsSync(p));

if (!CHROMIUM) {
  console.warn(
    `[browser tests] SKIPPED: no Chromium binary (looked for ${CANDIDATES.join(', ')}; set HEARTH_CHROMIUM). ` +
      'Install Debian\'s `chromium` package to run them (.ci/run does).',
  );
}

/** DESIGN.md's flags: headless, no sandbox (containers), no background traffic, WebGPU on SwiftShader. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-dev-shm-usage',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--enable-unsafe-webgpu',
];

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createNetServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export interface DemoServer {
  url: string;
  close(): Promise<void>;
}

/** The demo on a free port of localhost (a secure context, so service workers work). */
/** A stand-in for the hub: /mirror/{org}/{name}/resolve/main/{file} serves models/fixtures/{name}/{file}. */
function hubMirror(): Plugin {
  return {
    name: 'test-hub-mirror',
    configureServer(server) {
      server.middlewares.use((req, res, next) => {
        const m = /^\/mirror\/[\w.-]+\/([\w.-]+)\/resolve\/main\/([\w./-]+)$/.exec((req.url ?? '').split('?')[0]!);
        if (!m || m[2]!.includes('..')) return next();
        const standIn = mirrorStandIns.get(m[1]!);
        // A stand-in serves its fixture's fp32 weights under whatever dtype's name is asked.
        const path = standIn && /^onnx\/model_\w+\.onnx$/.test(m[2]!) ? 'onnx/model.onnx' : m[2]!;
        const file = join(mirrorFolders.get(m[1]!) ?? join(REPO_ROOT, 'models/fixtures', standIn ?? m[1]!), path);
        mirrorHits.push(req.url!);
        if (!existsSync(file)) {
          res.statusCode = 404;
          return res.end();
        }
        res.setHeader('Content-Length', String(statSync(file).size));
        if (req.method === 'HEAD') return res.end();
        res.end(readFileSync(file));
      });
    },
  };
}

/** Repo names the hub mirror answers with a fixture (repo name → fixture name). */
export const mirrorStandIns = new Map<string, string>();

/** Repo names the hub mirror answers from a folder a test wrote (repo name → absolute folder). */
export const mirrorFolders = new Map<string, string>();

/** Requests the hub mirror answered. */
export const mirrorHits: string[] = [];

/**
 * `pageDeps`: packages a page-client function imports that the demo does not. Vite
 * optimizes them up front; found mid-run, it re-optimizes and the page's earlier dependency
 * URLs (the engine's grammar module among them) stop resolving.
 */
export interface DemoOptions {
  /** Return false to answer a request with 503 instead (a network that refuses). */
  gate?: (url: string) => boolean;
}

/** Refuses what `gate` refuses, before any other middleware sees the request. */
function gatePlugin(gate: (url: string) => boolean): Plugin {
  return {
    name: 'test-gate',
    configureServer(server) {
      server.middlewares.use((req, res, next) => {
        if (gate(req.url ?? '/')) return next();
        res.statusCode = 503;
        res.end('refused by the test gate');
      });
    },
  };
}

export async function startDemo(opts: DemoOptions = {}, pageDeps: string[] = []): Promise<DemoServer> {
  const port = await freePort();
  const config = demoConfig();
  // Its own dependency cache: test files run in parallel, and two optimizers sharing one folder race.
  const cacheDir = mkdtempSync(join(tmpdir(), 'hearth-vite-'));
  const server: ViteDevServer = await createServer({
    ...config,
    plugins: [...(opts.gate ? [gatePlugin(opts.gate)] : []), ...(config.plugins ?? []), hubMirror()],
    optimizeDeps: { ...config.optimizeDeps, include: [...(config.optimizeDeps?.include ?? []), ...pageDeps] },
    cacheDir,
    configFile: false,
    logLevel: process.env.HEARTH_BROWSER_LOG ? 'info' : 'error',
    // No file watching or HMR: other work in the tree must not reload a page mid-test.
    server: { ...demoConfig().server, port, strictPort: true, host: 'localhost', hmr: false, watch: { ignored: ['**/*'] } },
  });
  await server.listen();
  return {
    url: `http://localhost:${port}/`,
    async close() {
      await server.close();
      rmSync(cacheDir, { recursive: true, force: true });
    },
  };
}

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** A fresh profile each time: no service worker, cache or storage carried over. */
export async function launch(): Promise<Browser> {
  const dir = mkdtempSync(join(tmpdir(), 'hearth-chromium-'));
  const context = await chromium.launchPersistentContext(dir, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1200, height: 860 },
  });
  return {
    context,
    async close() {
      await context.close().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A fresh-profile browser for the enclosing suite: launched before its tests, closed after them. */
export function freshBrowser(): { readonly context: BrowserContext } {
  let browser: Browser | undefined;
  beforeAll(async () => {
    browser = await launch();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });
  return {
    get context() {
      return browser!.context;
    },
  };
}

export interface HearthInfo {
  baseURL: string;
  apiKey: string;
  device: 'webgpu' | 'wasm';
  engine: 'shared' | 'dedicated';
  models: string[];
}

/** The plain fields of the object `window.hearth` resolves to (the rest are functions and the runtime, which stay in the page). */
export const HEARTH_INFO =
  'window.hearth.then((h) => ({ baseURL: h.baseURL, apiKey: h.apiKey, device: h.device, engine: h.engine, models: h.models }))';

/** Opens the demo and waits for `window.hearth`. Page errors and console errors are collected. */
export async function openDemo(
  context: BrowserContext,
  url: string,
  timeout = 180_000,
  prepare?: (page: Page) => Promise<unknown>,
): Promise<{ page: Page; info: HearthInfo; errors: string[] }> {
  const page = await context.newPage();
  await prepare?.(page);
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  // Network statuses (a 401 a test asked for) are the tests' business, not page errors.
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) errors.push(m.text());
    if (process.env.HEARTH_BROWSER_LOG) console.log(`[page ${m.type()}] ${m.text()}`);
  });
  await page.goto(url);
  page.on('response', async (r) => { if (process.env.HEARTH_BROWSER_LOG && r.status() >= 400) console.log('[response]', r.status(), r.url(), await r.text().catch(() => '?')); });
  await page.waitForFunction(() => 'hearth' in window, undefined, { timeout });
  const info = (await page.evaluate(HEARTH_INFO)) as HearthInfo;
  return { page, info, errors };
}

const pageModule = (file: string) => `/@fs${join(REPO_ROOT, 'test/browser', file)}`;

type AnyFunctions = Record<string, (...args: never[]) => unknown>;
type PageCall<M extends AnyFunctions> = <K extends keyof M & string>(page: Page, fn: K, ...args: Parameters<M[K]>) => Promise<Awaited<ReturnType<M[K]>>>;

/** A caller of the exported functions of a page module (test/browser/<file>), run inside the
 * page, where Vite imports it. */
export function pageModuleCaller<M extends AnyFunctions>(file: string): PageCall<M> {
  return (page, fn, ...args) => {
    // A string, so the test runner's transform of import() does not reach the page.
    const code = `import(${JSON.stringify(pageModule(file))}).then((m) => m[${JSON.stringify(fn)}](...${JSON.stringify(args)}))`;
    return page.evaluate(code) as Promise<never>;
  };
}

/** Calls a function of page-client.ts inside the page. */
export const inPage = pageModuleCaller<typeof import('./page-client.js')>('page-client.ts');
/** Calls a function of page-responses.ts (the openai SDK's Responses API) inside the page. */
export const inResponsesPage = pageModuleCaller<typeof import('./page-responses.js')>('page-responses.ts');
/** Calls a function of page-frameworks.ts (the AI SDK and LangChain) inside the page. */
export const inFrameworkPage = pageModuleCaller<typeof import('./page-frameworks.js')>('page-frameworks.ts');
