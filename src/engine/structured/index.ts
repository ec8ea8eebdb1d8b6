// Structured outputs: the grammar engine behind `response_format`, `/generate`'s
// json_schema / regex / ebnf, and tool calls.
import type { TextCodec } from '../text/codec.js';
import { Grammars } from './grammars.js';
import type { TokenizerJson } from './tokenizer-info.js';
import { Utf8Filter } from './utf8.js';

export { Constraint, maskRows } from './constraint.js';
export { setXGrammarLoader, type GrammarCompiler, type XGrammar } from './xgrammar.js';
export { GRAMMAR_CACHE_SIZE } from './grammars.js';

const perModel = new WeakMap<TextCodec, Grammars>();

/** The grammar cache of one loaded model (keyed by its codec, so a redeploy starts afresh). */
export function grammarsFor(codec: TextCodec, vocabSize: number, stopIds: number[]): Grammars {
  let g = perModel.get(codec);
  if (!g) {
    const raw = (codec.tokenizer as unknown as { _tokenizerJSON: TokenizerJson })._tokenizerJSON;
    // Tool-call markers are text to the grammar, so that `[TOOL_CALLS]` can be written as the one token a model knows.
    const json = { ...raw, added_tokens: raw.added_tokens?.map((t) => (codec.markerIds.has(t.id) ? { ...t, special: false } : t)) };
    const bytes = Array.from({ length: vocabSize }, (_, id) => (codec.isSpecial(id) ? new Uint8Array() : codec.tokenBytes(id)));
    const encode = (text: string) => codec.tokenizer.encode(text, { add_special_tokens: false });
    perModel.set(codec, (g = new Grammars(json, vocabSize, stopIds, new Utf8Filter(bytes), encode)));
  }
  return g;
}


/** Grammars a model's cache holds now (0 before its first). */
export function cachedGrammars(codec: TextCodec): number {
  return perModel.get(codec)?.cached ?? 0;
}

/** Frees a model's compiled grammars once it is unloaded (after its requests have drained). */
export async function releaseGrammars(codec: TextCodec): Promise<void> {
  const g = perModel.get(codec);
  perModel.delete(codec);
  await g?.dispose();
}
