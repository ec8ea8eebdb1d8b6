// The Qwen-shaped model (Qwen2.5's 151,936-token vocabulary, tied embeddings) as GGUF, for the
// bench's llama.cpp peer on real shapes: llama.cpp reads Qwen's tokenizer as Hugging Face's does,
// takes lm_head from the embedding, and decodes what an ONNX graph of the same weights decodes.
// On the small twin (2 layers of hidden 128), which has the real vocabulary.
import * as ort from 'onnxruntime-node';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getLlama, LlamaLogLevel, readGgufFileInfo, type Llama, type LlamaModel, type Token } from 'node-llama-cpp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES_DIR } from '../../models/index.js';
import { qwenShapedFixture, qwenShapedWeights, writeQwenShaped } from '../../models/exports/qwen-shaped.js';
import { writeQwenShapedGguf } from '../../models/gguf/qwen-shaped.js';
import { buildLlamaGraph } from '../../models/llama/graph.js';
import { argmax } from '../../models/reference.js';
import { referenceTokenizer } from '../helpers/exports.js';
import { runLlama } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'hearth-gguf-qwen-'));
let llama: Llama;
let model: LlamaModel;
beforeAll(async () => {
  writeQwenShaped(FIXTURES_DIR, 'small');
  writeQwenShapedGguf(join(dir, 'small-F32.gguf'), 'small', 'F32');
  llama = await getLlama({ gpu: false, build: 'never', skipDownload: true, progressLogs: false, logLevel: LlamaLogLevel.error });
  model = await llama.loadModel({ modelPath: join(dir, 'small-F32.gguf') });
}, 120_000);
afterAll(async () => {
  await model?.dispose();
  await llama?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

const chat = (user: string) =>
  `<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n<|im_start|>user\n${user}<|im_end|>\n<|im_start|>assistant\n`;

describe('the Qwen-shaped model as GGUF', () => {
  it('has the whole vocabulary (ids past the tokenizer as unused padding), Qwen2\'s pre-tokenizer, and no output.weight (tied)', async () => {
    const info = await readGgufFileInfo(join(dir, 'small-F32.gguf'), { logWarnings: false });
    const md = info.metadata as unknown as { tokenizer: { ggml: { pre: string; tokens: string[]; token_type: number[]; eos_token_id: number } } };
    expect(md.tokenizer.ggml.pre).toBe('qwen2');
    expect(md.tokenizer.ggml.tokens).toHaveLength(151_936);
    expect(md.tokenizer.ggml.tokens[151_645]).toBe('<|im_end|>');
    expect(md.tokenizer.ggml.token_type[151_645]).toBe(3); // control
    expect(md.tokenizer.ggml.tokens[151_935]).toBe('[PAD151935]');
    expect(md.tokenizer.ggml.token_type[151_935]).toBe(5); // unused
    expect(md.tokenizer.ggml.eos_token_id).toBe(151_645);
    const names = info.tensorInfo!.map((t) => t.name);
    expect(names).toContain('token_embd.weight');
    expect(names).not.toContain('output.weight');
  });

  it("tokenizes chat prompts as the model's Hugging Face tokenizer does (specials, digits, accents, emoji)", async () => {
    const tok = await referenceTokenizer(qwenShapedFixture('small'));
    for (const user of ['Hello!', 'Round 3, request 7: the river stone light', 'Is 42 the answer? 1234567', 'Café au lait, s’il vous plaît 😀', 'line one\n\nline two\r\n  indented']) {
      const text = chat(user);
      const theirs = Array.from(model.tokenize(text, true));
      const ours = (tok.encode(text, { add_special_tokens: false }) as number[]).map(Number);
      expect(theirs, user).toEqual(ours);
    }
  });

  it('greedy-decodes the tokens an fp32 ONNX graph of the same weights decodes, lm_head on the embedding', async () => {
    const w = qwenShapedWeights('small');
    const session = await ort.InferenceSession.create(buildLlamaGraph(w, { tiedEmbeddings: true }));
    const context = await model.createContext({ contextSize: 256, threads: 2, experimentalKvCacheKeyType: 'F32', experimentalKvCacheValueType: 'F32' });
    const seq = context.getSequence();
    const prompt = Array.from(model.tokenize(chat('Tell me a story about a cat and a dog.'), true), Number);
    const ours: number[] = [];
    let out = await runLlama(session, w.config, [prompt], [prompt.map(() => 1)], [prompt.map((_, i) => i)]);
    for (let n = prompt.length; ours.length < 8; n++) {
      ours.push(argmax(out.logits[0]!.at(-1)!));
      out = await runLlama(session, w.config, [[ours.at(-1)!]], [Array(n + 1).fill(1)], [[n]], out.present);
    }
    const theirs: number[] = [];
    let input = prompt;
    while (theirs.length < 8) {
      const res = await seq.controlledEvaluate(input.map((t, i) => (i === input.length - 1 ? [t as Token, { generateNext: { token: true } }] : (t as Token))));
      theirs.push(res[input.length - 1]!.next.token!);
      input = [theirs.at(-1)!];
    }
    expect(theirs).toEqual(ours);
    await context.dispose();
    await session.release();
  }, 60_000);
});
