// bench-chat: a random-weight Llama of tens of millions of parameters that never emits
// EOS in its first 512 greedy tokens.
import * as ort from 'onnxruntime-node';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { benchChat, fixtureTokenizer, writeFixtures } from '../../models/index.js';
import { parameterCount } from '../../models/llama/weights.js';
import { argmax } from '../../models/reference.js';
import { chatPrompt, encoder, runLlama } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'hearth-bench-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the bench-chat fixture', () => {
  it('is written by the bench preset with 30–60 M parameters and a 2048+ context', async () => {
    expect(await writeFixtures({ outDir: dir, preset: 'bench' })).toEqual(['tiny-chat', 'tiny-embed', 'bench-chat']);
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
});
