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
import { fusedLlamaGraph } from '../../models/exports/fused-graph.js';
import { buildLlamaGraph } from '../../models/llama/graph.js';
import { TensorType } from '../../src/onnx/proto.js';
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
    // q4f16 is the builder's int4 for WebGPU and CUDA: float16 KV and logits (io_dtype).
    for (const [file, float] of [['model.onnx', 'float32'], ['model_q4.onnx', 'float32'], ['model_q4f16.onnx', 'float16']] as const) {
      const session = await ort.InferenceSession.create(join(fixtures, NAME, 'onnx', file));
      try {
        expect(session.inputNames).toEqual(['input_ids', 'attention_mask', 'past_key_values.0.key', 'past_key_values.1.key', 'past_key_values.0.value', 'past_key_values.1.value']);
        expect(session.outputNames).toEqual(['logits', 'present.0.key', 'present.1.key', 'present.0.value', 'present.1.value']);
        const past = session.inputMetadata.find((m) => m.name === 'past_key_values.0.key');
        expect(past?.isTensor && past.shape).toEqual(['batch_size', 1, 'past_sequence_length', 16]);
        expect(session.inputMetadata.map((m) => m.isTensor && m.type)).toEqual(['int64', 'int64', float, float, float, float]);
        expect(session.outputMetadata.map((m) => m.isTensor && m.type)).toEqual([float, float, float, float, float]);
      } finally {
        await session.release();
      }
    }
    const genai = JSON.parse(readFileSync(join(fixtures, NAME, 'genai_config.json'), 'utf8'));
    expect(genai.model.decoder).toMatchObject({ head_size: 16, num_key_value_heads: 1, inputs: { past_key_names: 'past_key_values.%d.key' } });
    expect(genai.search.past_present_share_buffer).toBe(true);
  }, 60_000);

  it('writes its ops as the builder does: GroupQueryAttention with do_rotary, MatMulNBits and GatherBlockQuantized in q4 and q4f16', () => {
    const fp32 = readFileSync(join(fixtures, NAME, 'onnx/model.onnx')).subarray(0, 1 << 20).toString('latin1');
    for (const op of ['GroupQueryAttention', 'SimplifiedLayerNormalization', 'SkipSimplifiedLayerNormalization', 'do_rotary', 'cos_cache', 'qkv_proj']) expect(fp32).toContain(op);
    for (const file of ['model_q4.onnx', 'model_q4f16.onnx']) {
      const q4 = readFileSync(join(fixtures, NAME, 'onnx', file)).toString('latin1');
      for (const op of ['MatMulNBits', 'GatherBlockQuantized', 'GroupQueryAttention', 'accuracy_level', 'SkipSimplifiedLayerNormalization']) expect(q4).toContain(op);
    }
  });

  it("stores q4f16's float initializers in float16, the builder's io_dtype: int4 scales, norms, rotary caches", () => {
    const graph = fusedLlamaGraph(exportFixtureWeights(NAME, exportSeed(NAME)), { weights: 'q4f16' }).graph();
    const floats = graph.initializers.filter((t) => t.type === TensorType.FLOAT || t.type === TensorType.FLOAT16);
    expect(floats.filter((t) => t.type === TensorType.FLOAT).map((t) => t.name)).toEqual([]);
    const names = floats.map((t) => t.name);
    for (const n of ['cos_cache', 'sin_cache', 'lm_head.MatMul.weight_scales', 'model.layers.0.input_layernorm.weight', 'model.layers.2.final_norm_layernorm.weight', 'model.layers.1.attn.qkv_proj.MatMul.weight_scales']) expect(names).toContain(n);
    const mm = graph.nodes.filter((n) => n.opType === 'MatMulNBits');
    expect(mm.length).toBe(2 * 5 + 1); // qkv, o, gate, up, down per layer, and lm_head
    for (const n of mm) expect(n.attributes).toMatchObject({ block_size: { value: 32 }, accuracy_level: { value: 4 }, bits: { value: 4 } });
  });
});
