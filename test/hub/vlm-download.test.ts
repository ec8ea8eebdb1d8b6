// A vision-language model from the hub (the test mirror): besides transformers.js's file list
// (the three graphs, config and tokenizer, at most preprocessor_config.json), the processor's
// configs and chat_template.json come down too, byte-identical, and the folder passes the
// checks a VLM is loaded with.
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { downloadModel } from '../../src/engine/hub/node.js';
import { validateCheckpoint } from '../../src/engine/models/files.js';
import { nodeFiles } from '../../src/ops/checkpoints.js';
import { exportFixtures } from '../helpers/exports.js';
import { VLM_FIXTURE } from '../helpers/vision.js';
import { startMirror, type Mirror } from './mirror.js';

let fixtures: string;
let mirror: Mirror;
let cacheDir: string;
const sha = async (p: string) => createHash('sha256').update(await readFile(p)).digest('hex');

beforeAll(async () => {
  fixtures = await exportFixtures();
  mirror = await startMirror(fixtures);
  cacheDir = await mkdtemp(join(tmpdir(), 'hearth-hub-vlm-'));
});
afterAll(async () => {
  await mirror.close();
  await rm(cacheDir, { recursive: true, force: true });
});

describe('a VLM from the hub', () => {
  it('downloads its graphs, tokenizer and processor configs, and passes the checks it loads with', async () => {
    const folder = await downloadModel({ cacheDir, endpoint: mirror.url }, { repo: `test-org/${VLM_FIXTURE}`, task: 'chat', dtype: 'fp32' });
    const files = [
      'config.json', 'tokenizer.json', 'tokenizer_config.json', 'preprocessor_config.json', 'processor_config.json', 'chat_template.json',
      'onnx/decoder_model_merged.onnx', 'onnx/embed_tokens.onnx', 'onnx/vision_encoder.onnx',
    ];
    for (const f of files) expect(await sha(join(folder, f)), f).toBe(await sha(join(fixtures, VLM_FIXTURE, f)));
    const info = await validateCheckpoint(nodeFiles, folder, { entry: { id: 'svc/vlm', task: 'chat', dtype: { cpu: 'fp32' } }, device: 'cpu' });
    expect(info).toMatchObject({ model_type: 'idefics3', task: 'chat' });
  });
});
