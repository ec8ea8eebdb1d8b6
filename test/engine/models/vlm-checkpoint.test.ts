// A vision-language checkpoint in onnx-community's layout passes the same checks a text model
// does before it loads (hearth models add, --models <folder>), each of its three graphs looked
// for in the entry's dtype.
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nodeBackend } from '../../../src/backends/node.js';
import { validateCheckpoint } from '../../../src/engine/models/files.js';
import { estimateFit } from '../../../src/engine/models/fit.js';
import { nodeFiles } from '../../../src/ops/checkpoints.js';
import { exportFixtures } from '../../helpers/exports.js';

const entry = (dtype: string) => ({ id: 'svc/vlm', task: 'chat' as const, dtype: { cpu: dtype } });

describe('a SmolVLM checkpoint', () => {
  it('is a chat model with its text model\'s context and all three graphs found', async () => {
    const folder = join(await exportFixtures(), 'smolvlm-export');
    const info = await validateCheckpoint(nodeFiles, folder, { entry: entry('fp32'), device: 'cpu' });
    expect(info).toMatchObject({ model_type: 'idefics3', task: 'chat', context_length: 8192 });
    expect(info.onnx.sort()).toEqual(['onnx/decoder_model_merged.onnx', 'onnx/embed_tokens.onnx', 'onnx/vision_encoder.onnx']);
  });

  it('is refused naming each graph the dtype lacks, the dtypes the folder has for it, and a missing processor config', async () => {
    const folder = join(await exportFixtures(), 'smolvlm-export');
    // The fixture has q4 files for the decoder and the vision encoder, not for embed_tokens.
    await expect(validateCheckpoint(nodeFiles, folder, { entry: entry('q4'), device: 'cpu' })).rejects.toThrow(/onnx\/embed_tokens_q4\.onnx is missing .*has dtypes: fp32/);
    const copy = await mkdtemp(join(tmpdir(), 'hearth-vlm-'));
    try {
      await cp(folder, copy, { recursive: true });
      await rm(join(copy, 'onnx/vision_encoder.onnx'));
      await expect(validateCheckpoint(nodeFiles, copy, { entry: entry('fp32'), device: 'cpu' })).rejects.toThrow(/onnx\/vision_encoder\.onnx is missing/);
      await rm(join(copy, 'preprocessor_config.json'));
      await expect(validateCheckpoint(nodeFiles, copy, { entry: entry('fp32'), device: 'cpu' })).rejects.toThrow(/preprocessor_config\.json is missing \(a vision-language model's image processor settings\)/);
    } finally {
      await rm(copy, { recursive: true, force: true });
    }
  });

  it("is sized as its three graphs' weights and its text model's KV cache", async () => {
    const folder = join(await exportFixtures(), 'smolvlm-export');
    const onnx = (f: string) => statSync(join(folder, 'onnx', f)).size;
    const fit = await estimateFit(nodeBackend('cpu'), folder, { ...entry('fp32'), class: 't', context_length: 1024, source: folder, price: { input_per_1m: 0, output_per_1m: 0 } });
    expect(fit?.weightsBytes).toBe(onnx('decoder_model_merged.onnx') + onnx('embed_tokens.onnx') + onnx('vision_encoder.onnx'));
    const text = JSON.parse(readFileSync(join(folder, 'config.json'), 'utf8')).text_config;
    const headDim = text.head_dim ?? text.hidden_size / text.num_attention_heads;
    expect(fit?.kvBytes).toBe(2 * text.num_hidden_layers * text.num_key_value_heads * headDim * 1024 * 4);
  });
});
