// A hub repo whose weights are in numbered external data chunks (as exports over 2 GB
// are): the download fetches every chunk with progress, and the model then serves.
import { mkdtemp, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeBackend } from '../../src/backends/node.js';
import { createEngine } from '../../src/engine/engine.js';
import type { DownloadProgress } from '../../src/engine/protocol.js';
import { downloadModel, nodeHub } from '../../src/engine/hub/node.js';
import { exportFixtures } from '../helpers/exports.js';
import { startMirror, type Mirror } from './mirror.js';

let dir: string;
let mirror: Mirror;

beforeAll(async () => {
  dir = await exportFixtures();
  mirror = await startMirror(dir);
}, 120_000);
afterAll(() => mirror.close());

describe('hub downloads of external data', () => {
  it('fetches model.onnx_data and model.onnx_data_1 with progress, and the model serves', async () => {
    const cacheDir = await mkdtemp(join(tmpdir(), 'hearth-hub-ext-'));
    const events: DownloadProgress[] = [];
    const folder = await downloadModel(
      { cacheDir, endpoint: mirror.url },
      { repo: 'test-org/qwen3-export', task: 'chat', dtype: 'fp32', onProgress: (p) => events.push(p) },
    );
    for (const f of ['onnx/model.onnx_data', 'onnx/model.onnx_data_1']) {
      const size = (await stat(join(dir, 'qwen3-export', f))).size;
      expect((await stat(join(folder, f))).size, f).toBe(size);
      expect(events.filter((e) => e.file === f).at(-1), f).toMatchObject({ done: true, loaded: size });
    }

    const engine = createEngine(nodeBackend('cpu'), { hub: nodeHub({ cacheDir, endpoint: mirror.url }) });
    try {
      await engine.load([
        { id: 'svc/qwen3', task: 'chat', class: 'tiny', context_length: 4096, source: 'test-org/qwen3-export', dtype: { cpu: 'fp32' }, price: { input_per_1m: 0, output_per_1m: 0 } },
      ]);
      for (let i = 0; i < 400 && (await engine.models())[0]!.status === 'starting'; i++) await new Promise((r) => setTimeout(r, 50));
      expect((await engine.models())[0]).toMatchObject({ status: 'ready' });
      const r = await engine.generate(
        {
          id: 'x', model: 'svc/qwen3', prompt: { messages: [{ role: 'user', content: 'Hi' }] },
          sampling: { max_tokens: 4, temperature: 0, top_p: 1, top_k: -1, min_p: 0, presence_penalty: 0, frequency_penalty: 0, stop: [], stop_token_ids: [], ignore_eos: false, logprobs: -1 },
        },
        () => undefined,
      );
      expect(r.completion_tokens).toBe(4);
    } finally {
      await engine.dispose();
    }
  }, 120_000);
});
