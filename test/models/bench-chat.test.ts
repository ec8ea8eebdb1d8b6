// bench-chat: a random-weight Llama of tens of millions of parameters that never emits
// EOS in its first 512 greedy tokens.
import * as ort from 'onnxruntime-node';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { benchChat, fixtureTokenizer, PRESET_FIXTURES, writeFixtures } from '../../models/index.js';
import { parameterCount } from '../../models/llama/weights.js';
import { argmax } from '../../models/reference.js';
import { chatPrompt, encoder, maxAbsDiff, runLlama } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'hearth-bench-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the bench-chat fixture', () => {
  it('is written by the bench preset with 30–60 M parameters and a 2048+ context', async () => {
    expect(PRESET_FIXTURES.bench).toEqual(['tiny-chat', 'tiny-embed', 'bench-chat', 'bench-chat-q4-b32', 'bench-chat-q4-b32-acc4', 'bench-chat-genai']);
    // Only the folders read below are written (the others, standing in as present, would take as long again).
    for (const other of ['tiny-chat', 'tiny-embed', 'bench-chat-q4-b32', 'bench-chat-q4-b32-acc4']) mkdirSync(join(dir, other));
    expect(await writeFixtures({ outDir: dir, preset: 'bench', ifMissing: true })).toEqual(['bench-chat', 'bench-chat-genai']);
    const config = JSON.parse(readFileSync(join(dir, 'bench-chat', 'config.json'), 'utf8'));
    expect(config.max_position_embeddings).toBeGreaterThanOrEqual(2048);
    const n = parameterCount(benchChat());
    expect(n).toBeGreaterThan(30e6);
    expect(n).toBeLessThan(60e6);
  });

  it('never emits EOS in its first 512 greedy tokens', async () => {
    const session = await ort.InferenceSession.create(join(dir, 'bench-chat', 'onnx', 'model.onnx'));
    const c = benchChat().config;
    const bpe = fixtureTokenizer();
    const eos = [bpe.specialIds['<|im_end|>'], bpe.specialIds['<|endoftext|>']];
    const prompt = encoder().encode(chatPrompt('Write a long essay about the sea.'));
    let out = await runLlama(session, c, [prompt], [prompt.map(() => 1)], [prompt.map((_, i) => i)]);
    let len = prompt.length;
    for (let n = 0; n < 512; n++) {
      const logits = out.logits[0]!.at(-1)!;
      const tok = argmax(logits);
      expect(eos).not.toContain(tok);
      for (const e of eos) expect(logits[e]).toBe(0);
      out = await runLlama(session, c, [[tok]], [Array(len + 1).fill(1)], [[len]], out.present);
      len++;
    }
  }, 120_000);

  it('in onnxruntime-genai\'s form (fused attention, untied lm_head) gives the plain graph\'s next-token logits', async () => {
    const c = benchChat().config;
    const prompt = encoder().encode(chatPrompt('Write a long essay about the sea.'));
    const plain = await ort.InferenceSession.create(join(dir, 'bench-chat', 'onnx', 'model.onnx'));
    const want = (await runLlama(plain, c, [prompt], [prompt.map(() => 1)], [prompt.map((_, i) => i)])).logits[0]!.at(-1)!;
    await plain.release();
    const fused = await ort.InferenceSession.create(join(dir, 'bench-chat-genai', 'onnx', 'model.onnx'));
    const feeds: Record<string, ort.Tensor> = {
      input_ids: new ort.Tensor('int64', BigInt64Array.from(prompt, BigInt), [1, prompt.length]),
      attention_mask: new ort.Tensor('int64', new BigInt64Array(prompt.length).fill(1n), [1, prompt.length]),
    };
    for (const name of fused.inputNames.filter((n) => n.startsWith('past_key_values.'))) {
      feeds[name] = new ort.Tensor('float32', new Float32Array(0), [1, c.kvHeads, 0, c.headDim]);
    }
    const logits = (await fused.run(feeds)).logits!;
    const got = (logits.data as Float32Array).subarray((prompt.length - 1) * c.vocabSize, prompt.length * c.vocabSize);
    await fused.release();
    expect(maxAbsDiff(got, want)).toBeLessThan(1e-3);
    expect(argmax(got)).toBe(argmax(want));
  }, 60_000);
});
