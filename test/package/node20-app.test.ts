// Hearth as a user still on Node 20 gets it: the packed tarball installed into an app with
// msw 2 and openai 6 (test/package/apps/node20), whose own test suite runs through
// hearth/msw on Node 20, and `npx hearth serve` from there.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { appEnv, copyApp, findNode, GREEDY_CHAT, installApp, packHearth, run, serveFromApp, snapshot, type AppServer } from './apps.js';

const node = findNode((major) => major === 20, 'HEARTH_NODE20');
if (!node) console.warn('[package tests] SKIPPED the Node 20 app: no Node 20 binary (set HEARTH_NODE20; .ci/run does)');

describe.skipIf(!node)('an app on Node 20 with msw 2 and openai 6', () => {
  let dir: string;
  let notInstalled: string | undefined;
  let env: NodeJS.ProcessEnv;
  let cacheDir: string;
  let before: Map<string, string>;
  let server: AppServer | undefined;
  let serverText: string | undefined;

  beforeAll(async () => {
    dir = copyApp('node20', await packHearth());
    notInstalled = await installApp(dir, node!);
    if (notInstalled) console.warn(`[package tests] SKIPPED: ${notInstalled}`);
    cacheDir = mkdtempSync(join(tmpdir(), 'hearth-app-cache-'));
    env = appEnv(node!, { HEARTH_CACHE_DIR: cacheDir });
    if (!notInstalled) before = snapshot(join(dir, 'node_modules/hearth'));
  }, 240_000);

  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
    rmSync(cacheDir, { recursive: true, force: true });
  });

  const installed = (ctx: TestContext) => {
    if (notInstalled) ctx.skip();
  };

  it('has one msw in the tree: the app’s own 2.x', async (ctx) => {
    installed(ctx);
    const r = await run('npm', ['ls', 'msw', '--all', '--parseable'], { cwd: dir, env });
    expect(r.stdout.trim().split('\n')).toEqual([join(dir, 'node_modules/msw')]);
    expect(JSON.parse(readFileSync(join(dir, 'node_modules/msw/package.json'), 'utf8')).version).toMatch(/^2\./);
  });

  it('npx hearth serve answers on Node 20', async (ctx) => {
    installed(ctx);
    server = await serveFromApp(dir, env);
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: server.key });
    const chat = await client.chat.completions.create({ ...GREEDY_CHAT, messages: [{ role: 'user', content: 'Hello!' }] });
    serverText = chat.choices[0]!.message.content!;
    expect(serverText.length).toBeGreaterThan(0);
  }, 120_000);

  it("runs the app's own node:test suite through hearth/msw with openai 6, and server.close() works", async (ctx) => {
    installed(ctx);
    const results = join(cacheDir, 'msw-results.json');
    const r = await run(node!, ['--test', '--test-reporter=tap'], { cwd: dir, env: { ...env, APP_RESULTS: results } });
    expect(r.stdout + r.stderr, r.stdout + r.stderr).toMatch(/# pass 3\n# fail 0/);
    expect(r.code).toBe(0);
    expect(JSON.parse(readFileSync(results, 'utf8'))).toEqual({ chat: serverText, stream: serverText });
  }, 180_000);

  it('wrote nothing into node_modules/hearth', (ctx) => {
    installed(ctx);
    expect(snapshot(join(dir, 'node_modules/hearth'))).toEqual(before);
  });
});
