// Hearth as a user on today's Node gets it: the packed tarball installed into an empty app
// beside msw 3, openai 7, ai 7 and Vite 8 (test/package/apps/current), then every front
// door used from there: the exports and their types, `npx hearth serve`, the app's own
// test suite through hearth/msw, and a Vite page with hearth/vite and startHearth() in
// headless Chromium. All of them must give the same greedy text.
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, launch, type Browser } from '../browser/harness.js';
import { freePort } from '../helpers/ports.js';
import { spawnGroup, stopGroup } from '../helpers/process-group.js';
import { findNode, GREEDY_CHAT, run, snapshot } from './apps.js';
import { useInstalledApp } from './installed-app.js';

const node = findNode((major) => major >= 22, 'HEARTH_NODE24');
if (!node) console.warn('[package tests] SKIPPED the current-Node app: no Node 22 or later (set HEARTH_NODE24; .ci/run does)');

describe.skipIf(!node)('an app on Node 24 with msw 3, openai 7, ai 7 and Vite', () => {
  const app = useInstalledApp('current', node!);
  let serverText: string | undefined;

  it('imports every Node export and runs the hearth bin', async (ctx) => {
    app.installed(ctx);
    const code = `for (const m of ['hearth', 'hearth/node', 'hearth/msw', 'hearth/vite']) console.log(m, Object.keys(await import(m)).sort().join(','));`;
    const r = await run(node!, ['--input-type=module', '-e', code], { cwd: app.dir, env: app.env });
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^hearth .*createRouter.*createRuntime/m);
    expect(r.stdout).toMatch(/^hearth\/node .*serve/m);
    expect(r.stdout).toMatch(/^hearth\/msw .*hearthHandlers/m);
    expect(r.stdout).toMatch(/^hearth\/vite .*hearth/m);
    const version = await run('npx', ['--no', '--', 'hearth', '--version'], { cwd: app.dir, env: app.env });
    expect(version.stdout.trim()).toBe(JSON.parse(readFileSync(join(app.dir, 'node_modules/hearth/package.json'), 'utf8')).version);
  });

  it("has one msw in the tree, the app's own 3.x, which Hearth's handlers are made with", async (ctx) => {
    app.installed(ctx);
    const msw = await app.msw();
    expect(msw.copies).toEqual([join(app.dir, 'node_modules/msw')]);
    expect(msw.version).toMatch(/^3\./);
  });

  it.for(['bundler', 'nodenext'])('type-checks code that uses every export with moduleResolution %s', async (resolution, ctx) => {
    app.installed(ctx);
    const r = await run(node!, ['node_modules/typescript/bin/tsc', '-p', `tsconfig.${resolution}.json`], { cwd: app.dir, env: app.env });
    expect(r.stdout + r.stderr).toBe('');
    expect(r.code).toBe(0);
  });

  it('npx hearth serve serves the fixtures, which it writes into the cache folder', async (ctx) => {
    app.installed(ctx);
    const server = await app.serve();
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: server.key });
    const chat = await client.chat.completions.create({ ...GREEDY_CHAT, messages: [{ role: 'user', content: 'Hello!' }] });
    serverText = chat.choices[0]!.message.content!;
    expect(serverText.length).toBeGreaterThan(0);
    const embedding = await client.embeddings.create({ model: 'svc/tiny-embed', input: 'a' });
    expect(embedding.data[0]!.embedding).toHaveLength(1536);
    const version = JSON.parse(readFileSync(join(app.dir, 'node_modules/hearth/package.json'), 'utf8')).version;
    expect(snapshot(join(app.cacheDir, 'fixtures', version)).has('tiny-chat/onnx/model.onnx')).toBe(true);
  }, 120_000);

  it("runs the app's own node:test suite through hearth/msw, and server.close() in its after hook works", async (ctx) => {
    app.installed(ctx);
    const results = join(app.cacheDir, 'msw-results.json');
    const r = await run(node!, ['--test', '--test-reporter=tap'], { cwd: app.dir, env: { ...app.env, APP_RESULTS: results } });
    expect(r.stdout + r.stderr, r.stdout + r.stderr).toMatch(/# pass 5\n# fail 0/);
    expect(r.code).toBe(0);
    const seen = JSON.parse(readFileSync(results, 'utf8')) as Record<string, string>;
    expect(serverText).toBeDefined();
    expect(seen).toEqual({ chat: serverText, stream: serverText, ai: serverText });
  }, 180_000);

  describe.skipIf(!CHROMIUM)('a Vite page with hearth/vite and startHearth()', () => {
    let browser: Browser;
    let vite: ChildProcess | undefined;
    beforeAll(async () => {
      browser = await launch();
    }, 60_000);
    afterAll(async () => {
      await stopVite();
      await browser?.close();
    });

    /** Starts `npx vite <args>` on a free port and resolves once it answers. */
    async function startVite(args: string[]): Promise<string> {
      await stopVite(); // one a failed test left
      const port = await freePort();
      // In a group of its own, stopped whole: npx, sent SIGTERM, exits and leaves vite running.
      vite = spawnGroup('npx', ['--no', '--', 'vite', ...args, '--port', String(port), '--strictPort', '--host', 'localhost'], { cwd: app.dir, env: app.env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      vite.stdout!.on('data', (d: Buffer) => (out += d));
      vite.stderr!.on('data', (d: Buffer) => (out += d));
      const url = `http://localhost:${port}/`;
      for (let i = 0; i < 300; i++) {
        if (await fetch(url).then((r) => r.ok, () => false)) return url;
        if (vite.exitCode !== null) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      throw new Error(`vite ${args.join(' ')} did not answer:\n${out}`);
    }

    async function stopVite() {
      const v = vite;
      vite = undefined;
      if (v) await stopGroup(v);
    }

    /** Opens the app's page and waits for what its main.ts reports. */
    async function pageResult(url: string): Promise<{ device: string; models: string[]; chat: string; dimensions: number }> {
      const page: Page = await browser.context.newPage();
      try {
        const response = await page.goto(url);
        expect(response!.headers()['cross-origin-embedder-policy']).toBe('require-corp');
        await page.waitForSelector('#out[data-state]', { timeout: 180_000 });
        const text = await page.textContent('#out');
        expect(await page.getAttribute('#out', 'data-state'), text!).toBe('done');
        return JSON.parse(text!);
      } finally {
        await page.close();
      }
    }

    it("vite build then vite preview: the page's openai SDK gets the Node server's greedy text on WASM", async (ctx) => {
      app.installed(ctx);
      const build = await run('npx', ['--no', '--', 'vite', 'build'], { cwd: app.dir, env: app.env });
      expect(build.code, build.stdout + build.stderr).toBe(0);
      const result = await pageResult(await startVite(['preview']));
      await stopVite();
      expect(result).toEqual({ device: 'wasm', models: ['svc/tiny-chat', 'svc/tiny-embed'], chat: serverText, dimensions: 1536 });
    }, 300_000);

    it('vite (dev) serves the same page, the engine worker bundled out of node_modules', async (ctx) => {
      app.installed(ctx);
      const result = await pageResult(await startVite([]));
      await stopVite();
      expect(result).toEqual({ device: 'wasm', models: ['svc/tiny-chat', 'svc/tiny-embed'], chat: serverText, dimensions: 1536 });
    }, 300_000);
  });

  it('wrote nothing into node_modules/hearth', (ctx) => {
    app.installed(ctx);
    expect(app.hearthFiles()).toEqual(app.installedHearthFiles);
  });
});
