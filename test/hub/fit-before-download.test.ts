// A hub model that cannot fit is refused from the sizes the hub lists, before its weights are
// downloaded: the status is failed naming the sizes, and no weight file is fetched.
import { existsSync } from 'node:fs';
import { mkdtemp, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeBackend } from '../../src/backends/node.js';
import { createEngine } from '../../src/engine/engine.js';
import { nodeHub, planDownload } from '../../src/engine/hub/node.js';
import type { CatalogEntry, EngineApi } from '../../src/engine/protocol.js';
import { exportFixtures } from '../helpers/exports.js';
import { startMirror, type Mirror } from './mirror.js';

let dir: string;
let mirror: Mirror;
const price = { input_per_1m: 0, output_per_1m: 0 };

beforeAll(async () => {
  dir = await exportFixtures();
  mirror = await startMirror(dir);
}, 120_000);
afterAll(() => mirror.close());

async function settle(engine: EngineApi, entry: CatalogEntry) {
  await engine.load([entry]);
  for (let i = 0; i < 400 && (await engine.models())[0]!.status === 'starting'; i++) await new Promise((r) => setTimeout(r, 50));
  return (await engine.models())[0]!;
}

describe('fit before download', () => {
  it("lists each file's size from the hub without fetching a body", async () => {
    const cacheDir = await mkdtemp(join(tmpdir(), 'hearth-plan-'));
    const before = mirror.log.length;
    const plan = await planDownload({ cacheDir, endpoint: mirror.url }, { repo: 'test-org/qwen3-export', dtype: 'fp32' });
    for (const f of ['onnx/model.onnx', 'onnx/model.onnx_data', 'onnx/model.onnx_data_1']) {
      expect(plan.files.find((x) => x.file === f)?.bytes, f).toBe((await stat(join(dir, 'qwen3-export', f))).size);
    }
    expect(plan.config).toMatchObject({ model_type: 'qwen3' });
    expect(mirror.log.slice(before).filter((r) => r.path.includes('/onnx/') && r.method !== 'HEAD')).toEqual([]);
  });

  it('refuses a model whose weights and full-context KV exceed free memory before downloading it', async () => {
    const cacheDir = await mkdtemp(join(tmpdir(), 'hearth-fit-'));
    const engine = createEngine(nodeBackend('cpu'), { hub: nodeHub({ cacheDir, endpoint: mirror.url }) });
    const before = mirror.log.length;
    try {
      const m = await settle(engine, { id: 'svc/huge', task: 'chat', class: 't', context_length: 2 ** 40, source: 'test-org/llama3-export', dtype: { cpu: 'fp16' }, price });
      expect(m.status).toBe('failed');
      expect(m.detail).toMatch(/does not fit: 3\.9 MiB of weights \+ 65536\.0 GiB of KV cache for one full context = 65536\.0 GiB, but the free memory is [\d.]+ GiB/);
      expect(m.detail).toContain('nothing was downloaded (test-org/llama3-export: onnx/model_fp16.onnx 3.9 MiB)');
      expect(mirror.log.slice(before).filter((r) => r.path.includes('/onnx/') && r.method !== 'HEAD')).toEqual([]);
      expect(existsSync(join(cacheDir, 'test-org', 'llama3-export', 'onnx'))).toBe(false);
    } finally {
      await engine.dispose();
    }
  });
});
