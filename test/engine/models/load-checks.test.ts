// What a load refuses before serving: a dtype the folder lacks, a model that cannot fit
// the device, and a graph whose warm-up step onnxruntime cannot run. Each leaves the
// model `failed` with the reason, never `ready`.
import { cpSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GraphBuilder, TensorType } from '../../../src/onnx/graph.js';
import { nodeBackend } from '../../../src/backends/node.js';
import { createEngine } from '../../../src/engine/engine.js';
import type { CatalogEntry, EngineApi, ModelState } from '../../../src/engine/protocol.js';
import { exportFixtures } from '../../helpers/exports.js';

let dir: string;
let engine: EngineApi;
const price = { input_per_1m: 0, output_per_1m: 0 };

beforeAll(async () => {
  dir = await exportFixtures();
  engine = createEngine(nodeBackend('cpu'));
}, 120_000);
afterAll(() => engine?.dispose());

async function settle(entry: CatalogEntry): Promise<ModelState> {
  await engine.load([entry]);
  for (let i = 0; i < 400; i++) {
    const m = (await engine.models()).find((s) => s.id === entry.id)!;
    if (m.status !== 'starting') return m;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${entry.id} never settled`);
}

/** A graph with a decoder's inputs and outputs whose Reshape cannot run on a one-token step (and, if asked, an input no decoder has). */
function unrunnableDecoder(extraInput?: string): Uint8Array {
  const g = new GraphBuilder('broken');
  const ids = g.input('input_ids', TensorType.INT64, ['batch_size', 'sequence_length']);
  if (extraInput) g.input(extraInput, TensorType.INT64, ['batch_size', 'sequence_length']);
  g.input('attention_mask', TensorType.INT64, ['batch_size', 'total_sequence_length']);
  const shape = ['batch_size', 1, 'past_sequence_length', 4] as const;
  const k = g.input('past_key_values.0.key', TensorType.FLOAT, shape);
  const v = g.input('past_key_values.0.value', TensorType.FLOAT, shape);
  const f = g.node('Cast', [ids], { to: TensorType.FLOAT }, 'ids_f');
  g.output('logits', g.node('Reshape', [f, g.ints('bad_shape', [3, 5, -1])], {}, 'logits_r'), TensorType.FLOAT, ['batch_size', 'sequence_length', 8]);
  g.output('present.0.key', k, TensorType.FLOAT, shape);
  g.output('present.0.value', v, TensorType.FLOAT, shape);
  return g.toBytes();
}

describe('loading a checkpoint', () => {
  it('fails with the dtypes the folder has when the asked one is missing', async () => {
    const m = await settle({ id: 'svc/gemma-q4', task: 'chat', class: 't', context_length: 4096, source: join(dir, 'gemma3-export'), dtype: { cpu: 'q4' }, price });
    expect(m.status).toBe('failed');
    expect(m.detail).toContain('onnx/model_q4.onnx is missing');
    expect(m.detail).toContain('fp32, fp16');
  });

  it('refuses a model whose weights and one full context of KV exceed free memory, naming the sizes', async () => {
    const m = await settle({ id: 'svc/huge-context', task: 'chat', class: 't', context_length: 2 ** 40, source: join(dir, 'llama3-export'), dtype: { cpu: 'fp16' }, price });
    expect(m.status).toBe('failed');
    // fp16 KV: 2 layers × (key + value) × 1 head × 8 dims × 2 bytes = 64 bytes a token.
    expect(m.detail).toMatch(/does not fit: 3\.9 MiB of weights \+ 65536\.0 GiB of KV cache for one full context = 65536\.0 GiB, but the free memory is [\d.]+ GiB/);
  });

  /** A checkpoint folder around a hand-made graph, with the Llama 3 tokenizer. */
  function folderWith(graph: Uint8Array): string {
    const folder = mkdtempSync(join(tmpdir(), 'hearth-broken-'));
    for (const f of ['tokenizer.json', 'tokenizer_config.json']) cpSync(join(dir, 'llama3-export', f), join(folder, f));
    writeFileSync(join(folder, 'config.json'), JSON.stringify({ model_type: 'llama', num_hidden_layers: 1, num_attention_heads: 1, hidden_size: 4, vocab_size: 128256 }));
    mkdirSync(join(folder, 'onnx'));
    writeFileSync(join(folder, 'onnx', 'model.onnx'), graph);
    return folder;
  }

  it("is failed with onnxruntime's message when the warm-up step cannot run, never ready", async () => {
    const m = await settle({ id: 'svc/broken', task: 'chat', class: 't', context_length: 64, source: folderWith(unrunnableDecoder()), price });
    expect(m.status).toBe('failed');
    expect(m.detail).toContain('warm-up step failed');
    expect(m.detail).toMatch(/Reshape/);
  });

  it('is failed naming an input the graph wants that Hearth cannot feed', async () => {
    const m = await settle({ id: 'svc/odd-input', task: 'chat', class: 't', context_length: 64, source: folderWith(unrunnableDecoder('token_type_ids')), price });
    expect(m.status).toBe('failed');
    expect(m.detail).toContain('an input Hearth does not know how to feed: "token_type_ids"');
  });
});
