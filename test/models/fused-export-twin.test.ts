// The fused export fixture (onnxruntime-genai's builder form: GroupQueryAttention with the
// rotary inside, packed QKV, Skip/SimplifiedLayerNormalization) computes the model its
// weights describe: the same weights written as a plain-op graph (llama/graph.ts) give the
// same greedy tokens in transformers.js, and the graph has the builder's interface.
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AutoModelForCausalLM, Tensor, env } from '@huggingface/transformers';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportFixtureWeights } from '../../models/exports/fixtures.js';
import { exportSeed } from '../../models/fixtures.js';
import { buildLlamaGraph } from '../../models/llama/graph.js';
import type { ChatMessage } from '../../src/engine/protocol.js';
import { exportFixtures, referencePromptIds } from '../helpers/exports.js';

const NAME = 'llama3_2-fused-export';
const PROMPTS: ChatMessage[][] = [
  [{ role: 'user', content: 'Hello there' }],
  [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'Name three rivers of Europe.' }],
  [{ role: 'user', content: 'Why is the sky blue?' }],
];

let fixtures: string;
let twinRoot: string;

beforeAll(async () => {
  fixtures = await exportFixtures();
  // The twin: the fixture's folder with onnx/model.onnx replaced by the plain graph of the same weights.
  twinRoot = mkdtempSync(join(tmpdir(), 'hearth-fused-twin-'));
  const twin = join(twinRoot, NAME);
  mkdirSync(join(twin, 'onnx'), { recursive: true });
  for (const f of readdirSync(join(fixtures, NAME))) if (f.endsWith('.json')) copyFileSync(join(fixtures, NAME, f), join(twin, f));
  const w = exportFixtureWeights(NAME, exportSeed(NAME));
  writeFileSync(join(twin, 'onnx/model.onnx'), buildLlamaGraph(w, { tiedEmbeddings: true, positionIds: false }));
}, 60_000);

afterAll(() => rmSync(twinRoot, { recursive: true, force: true }));

/** transformers.js's greedy continuations of PROMPTS from the folder `root/NAME`. */
async function greedy(root: string): Promise<number[][]> {
  env.localModelPath = `${root}/`;
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  const model = await AutoModelForCausalLM.from_pretrained(NAME, { dtype: 'fp32', device: 'cpu', local_files_only: true });
  try {
    const out: number[][] = [];
    for (const messages of PROMPTS) {
      const ids = await referencePromptIds(NAME, messages);
      const input_ids = new Tensor('int64', BigInt64Array.from(ids, BigInt), [1, ids.length]);
      const attention_mask = new Tensor('int64', new BigInt64Array(ids.length).fill(1n), [1, ids.length]);
      const seq = (await model.generate({ input_ids, attention_mask, max_new_tokens: 12, do_sample: false } as never)) as { data: BigInt64Array };
      out.push(Array.from(seq.data.slice(ids.length), Number));
    }
    return out;
  } finally {
    await model.dispose();
  }
}

describe('the fused export fixture', () => {
  it('gives the greedy tokens of the same weights in plain ONNX ops, in transformers.js', async () => {
    const twin = await greedy(twinRoot);
    const fused = await greedy(fixtures);
    expect(fused).toEqual(twin);
    expect(new Set(fused.map((t) => t.join())).size).toBeGreaterThan(1); // the prompts lead somewhere different
  }, 120_000);

  it("has the builder's interface: no position_ids, every key before every value, and a genai_config.json", async () => {
    for (const file of ['model.onnx', 'model_q4.onnx']) {
      const session = await ort.InferenceSession.create(join(fixtures, NAME, 'onnx', file));
      try {
        expect(session.inputNames).toEqual(['input_ids', 'attention_mask', 'past_key_values.0.key', 'past_key_values.1.key', 'past_key_values.0.value', 'past_key_values.1.value']);
        expect(session.outputNames).toEqual(['logits', 'present.0.key', 'present.1.key', 'present.0.value', 'present.1.value']);
        const past = session.inputMetadata.find((m) => m.name === 'past_key_values.0.key');
        expect(past?.isTensor && past.shape).toEqual(['batch_size', 1, 'past_sequence_length', 16]);
      } finally {
        await session.release();
      }
    }
    const genai = JSON.parse(readFileSync(join(fixtures, NAME, 'genai_config.json'), 'utf8'));
    expect(genai.model.decoder).toMatchObject({ head_size: 16, num_key_value_heads: 1, inputs: { past_key_names: 'past_key_values.%d.key' } });
    expect(genai.search.past_present_share_buffer).toBe(true);
  }, 60_000);

  it('writes its ops as the builder does: GroupQueryAttention with do_rotary, MatMulNBits and GatherBlockQuantized in q4', () => {
    const fp32 = readFileSync(join(fixtures, NAME, 'onnx/model.onnx')).subarray(0, 1 << 20).toString('latin1');
    const q4 = readFileSync(join(fixtures, NAME, 'onnx/model_q4.onnx')).toString('latin1');
    for (const op of ['GroupQueryAttention', 'SimplifiedLayerNormalization', 'SkipSimplifiedLayerNormalization', 'do_rotary', 'cos_cache', 'qkv_proj']) expect(fp32).toContain(op);
    for (const op of ['MatMulNBits', 'GatherBlockQuantized', 'GroupQueryAttention']) expect(q4).toContain(op);
  });
});
