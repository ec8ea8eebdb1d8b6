// Hearth as a user still on Node 20 gets it: the packed tarball installed into an app with
// msw 2 and openai 6 (test/package/apps/node20), whose own test suite runs through
// hearth/msw on Node 20, and `npx hearth serve` from there.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { findNode, GREEDY_CHAT, run } from './apps.js';
import { useInstalledApp } from './installed-app.js';

const node = findNode((major) => major === 20, 'HEARTH_NODE20');
if (!node) console.warn('[package tests] SKIPPED the Node 20 app: no Node 20 binary (set HEARTH_NODE20; .ci/run does)');

describe.skipIf(!node)('an app on Node 20 with msw 2 and openai 6', () => {
  const app = useInstalledApp('node20', node!);
  let serverText: string | undefined;

  it('has one msw in the tree: the app’s own 2.x', async (ctx) => {
    app.installed(ctx);
    const msw = await app.msw();
    expect(msw.copies).toEqual([join(app.dir, 'node_modules/msw')]);
    expect(msw.version).toMatch(/^2\./);
  });

  it('npx hearth serve answers on Node 20', async (ctx) => {
    app.installed(ctx);
    const server = await app.serve();
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: server.key });
    const chat = await client.chat.completions.create({ ...GREEDY_CHAT, messages: [{ role: 'user', content: 'Hello!' }] });
    serverText = chat.choices[0]!.message.content!;
    expect(serverText.length).toBeGreaterThan(0);
  }, 120_000);

  it("runs the app's own node:test suite through hearth/msw with openai 6, and server.close() works", async (ctx) => {
    app.installed(ctx);
    const results = join(app.cacheDir, 'msw-results.json');
    const r = await run(node!, ['--test', '--test-reporter=tap'], { cwd: app.dir, env: { ...app.env, APP_RESULTS: results } });
    expect(r.stdout + r.stderr, r.stdout + r.stderr).toMatch(/# pass 4\n# fail 0/);
    expect(r.code).toBe(0);
    expect(JSON.parse(readFileSync(results, 'utf8'))).toEqual({ chat: serverText, stream: serverText });
  }, 180_000);

  it('wrote nothing into node_modules/hearth', (ctx) => {
    app.installed(ctx);
    expect(app.hearthFiles()).toEqual(app.installedHearthFiles);
  });
});
