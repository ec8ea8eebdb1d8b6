// hearth/vite's options, on Vite's own preview server: a catalog of the app's own, narrowed to
// the ids it names, and the isolation headers left to the app.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { preview, type PreviewServer } from 'vite';
import { hearth, type HearthViteOptions } from '../../src/front/vite/index.js';
import { fixtures } from '../helpers/fixtures.js';

const root = mkdtempSync(join(tmpdir(), 'hearth-vite-options-'));
const catalogFile = join(root, 'my-models', 'catalog.json');
const entry = (id: string, task: string, folder: string) => ({
  id, task, class: 't', context_length: 512, source: `./${folder}`, price: { input_per_1m: 0, output_per_1m: 0 },
});
const servers: PreviewServer[] = [];

/** A preview server of an empty app built into dist/, with the plugin and these options. */
async function serve(options: HearthViteOptions): Promise<string> {
  const server = await preview({
    root, configFile: false, logLevel: 'silent', appType: 'mpa', plugins: [hearth(options)],
    preview: { port: 0, host: '127.0.0.1' },
  });
  servers.push(server);
  return server.resolvedUrls!.local[0]!;
}

beforeAll(async () => {
  const dir = await fixtures();
  mkdirSync(join(root, 'dist'), { recursive: true });
  writeFileSync(join(root, 'dist', 'index.html'), '<!doctype html><title>app</title>');
  for (const name of ['tiny-chat', 'tiny-embed']) cpSync(join(dir, name), join(root, 'my-models', name), { recursive: true });
  writeFileSync(catalogFile, JSON.stringify({ models: [entry('svc/my-chat', 'chat', 'tiny-chat'), entry('svc/my-embed', 'embedding', 'tiny-embed')] }));
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  rmSync(root, { recursive: true, force: true });
});

describe('hearth/vite options', () => {
  it("serves the app's own catalog, narrowed to the ids `models` names, with only those folders", async () => {
    const url = await serve({ catalog: catalogFile, models: ['svc/my-chat'] });
    const catalog = (await (await fetch(`${url}models/catalog.json`)).json()) as { models: { id: string; source: string }[] };
    expect(catalog.models.map((m) => [m.id, m.source])).toEqual([['svc/my-chat', './my-chat/']]);
    const config = await fetch(`${url}models/my-chat/config.json`);
    expect(config.status).toBe(200);
    expect(await config.text()).toBe(readFileSync(join(root, 'my-models', 'tiny-chat', 'config.json'), 'utf8'));
    expect((await fetch(`${url}models/my-embed/config.json`)).status).toBe(404);
  });

  it('refuses, naming the id and the catalog, a `models` id the catalog lacks', async () => {
    const url = await serve({ catalog: catalogFile, models: ['svc/nope'] });
    const r = await fetch(`${url}models/catalog.json`);
    expect(r.ok).toBe(false);
    // The plugin's error reaches Vite's error handler, whose page is not ours to assert; the
    // refusal itself is what servedCatalog throws, checked here without the server.
    await expect(hearthCatalogError({ catalog: catalogFile, models: ['svc/nope'] })).resolves.toMatch(/svc\/nope not in .*catalog\.json/);
  });

  it('sends COOP and COEP by default, and leaves them to the app with isolation: false', async () => {
    const withHeaders = await fetch(`${await serve({ catalog: catalogFile })}models/catalog.json`);
    expect(withHeaders.headers.get('cross-origin-opener-policy')).toBe('same-origin');
    expect(withHeaders.headers.get('cross-origin-embedder-policy')).toBe('require-corp');
    const without = await fetch(`${await serve({ catalog: catalogFile, isolation: false })}models/catalog.json`);
    expect(without.status).toBe(200);
    expect(without.headers.get('cross-origin-opener-policy')).toBeNull();
    expect(without.headers.get('cross-origin-embedder-policy')).toBeNull();
  });
});

/** The message the plugin's catalog step fails with, through its dev-server hook. */
async function hearthCatalogError(options: HearthViteOptions): Promise<string> {
  const plugin = hearth(options) as { configureServer: (s: unknown) => Promise<void> };
  try {
    await plugin.configureServer({ middlewares: { use: () => undefined } });
    return 'no error';
  } catch (err) {
    return (err as Error).message;
  }
}
