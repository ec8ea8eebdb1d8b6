// Structured outputs: the grammar engine behind `response_format`, `/generate`'s
// json_schema / regex / ebnf, and tool calls.
import type { TextCodec } from '../text/codec.js';
import { Grammars } from './grammars.js';
import type { TokenizerJson } from './tokenizer-info.js';

export { Constraint, maskRows } from './constraint.js';
export { setXGrammarLoader, type GrammarCompiler, type XGrammar } from './xgrammar.js';

const perModel = new WeakMap<TextCodec, Grammars>();

/** The grammar cache of one loaded model (keyed by its codec, so a redeploy starts afresh). */
export function grammarsFor(codec: TextCodec, vocabSize: number, stopIds: number[]): Grammars {
  let g = perModel.get(codec);
  if (!g) {
    const json = (codec.tokenizer as unknown as { _tokenizerJSON: TokenizerJson })._tokenizerJSON;
    perModel.set(codec, (g = new Grammars(json, vocabSize, stopIds, neverUtf8(codec, vocabSize))));
  }
  return g;
}

/**
 * Tokens holding a byte that valid UTF-8 never contains (0xC0, 0xC1, 0xF5-0xFF). XGrammar
 * 0.1.27 takes an overlong pair such as C0 B6 for one character, which a UTF-8 decoder
 * turns into two U+FFFD: under a grammar these tokens are never allowed.
 */
function neverUtf8(codec: TextCodec, vocabSize: number): number[] {
  const ids: number[] = [];
  for (let id = 0; id < vocabSize; id++) {
    if (codec.tokenBytes(id).some((b) => b === 0xc0 || b === 0xc1 || b >= 0xf5)) ids.push(id);
  }
  return ids;
}
