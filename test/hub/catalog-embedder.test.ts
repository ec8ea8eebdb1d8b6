// The catalog's decoder embedder entry (svc/gte-qwen2-1536), as shipped but for its source,
// which points at a hub mirror of the Qwen3-Embedding-shaped fixture: it passes the fit
// check, downloads (with its pooling config), loads with its CPU dtype (q8) and embeds.
import { readFile } from 'node:fs/promises';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeBackend } from '../../src/backends/node.js';
import { createEngine } from '../../src/engine/engine.js';
import { nodeHub } from '../../src/engine/hub/node.js';
import type { CatalogEntry } from '../../src/engine/protocol.js';
import { exportFixtures } from '../helpers/exports.js';
import { startMirror, type Mirror } from './mirror.js';

let mirror: Mirror;

beforeAll(async () => {
  mirror = await startMirror(await exportFixtures());
}, 120_000);
afterAll(() => mirror.close());

describe('the catalog decoder embedder', () => {
  it('loads from the hub and serves unit vectors', async () => {
    const catalog = JSON.parse(await readFile(join(import.meta.dirname, '../../models/catalog.json'), 'utf8')) as { models: CatalogEntry[] };
    const entry = catalog.models.find((m) => m.id === 'svc/gte-qwen2-1536')!;
    expect(entry).toMatchObject({ task: 'embedding', dtype: { cpu: 'q8' } });
    const cacheDir = await mkdtemp(join(tmpdir(), 'hearth-gte-'));
    const engine = createEngine(nodeBackend('cpu'), { hub: nodeHub({ cacheDir, endpoint: mirror.url }) });
    try {
      await engine.load([{ ...entry, source: 'test-org/qwen3-embed-export' }]);
      for (let i = 0; i < 400 && (await engine.models())[0]!.status === 'starting'; i++) await new Promise((r) => setTimeout(r, 50));
      expect((await engine.models())[0]).toMatchObject({ status: 'ready' });
      const { data } = await engine.embed({ model: entry.id, input: ['rivers', 'stones'] });
      for (const v of data) expect(v.reduce((s, x) => s + x * x, 0)).toBeCloseTo(1, 5);
    } finally {
      await engine.dispose();
    }
  }, 60_000);
});
