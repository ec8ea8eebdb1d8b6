// XGrammar's view of a checkpoint's vocabulary, built from its tokenizer.json: each
// token's text as the vocabulary writes it (XGrammar decodes byte-level `Ġ` forms and
// byte-fallback `<0x0A>` forms itself, given the vocabulary type), and the stop tokens.
import type { TokenizerInfo, XGrammar } from './xgrammar.js';
import { withReason } from './xgrammar.js';

export interface TokenizerJson {
  model: { type?: string; vocab?: Record<string, number> | [string, number][]; byte_fallback?: boolean };
  decoder?: Decoder | null;
  normalizer?: { type: string; prepend?: string; normalizers?: { type: string; prepend?: string }[] } | null;
  pre_tokenizer?: { type: string; prepend_scheme?: string; add_prefix_space?: boolean } | null;
  added_tokens?: { id: number; content: string; special?: boolean }[];
}
interface Decoder {
  type: string;
  decoders?: Decoder[];
}

export type VocabType = 'raw' | 'byte_fallback' | 'byte_level';

export function vocabType(json: TokenizerJson): VocabType {
  const decoders = json.decoder?.type === 'Sequence' ? (json.decoder.decoders ?? []) : json.decoder ? [json.decoder] : [];
  if (decoders.some((d) => d.type === 'ByteLevel')) return 'byte_level';
  if (json.model.byte_fallback || decoders.some((d) => d.type === 'ByteFallback')) return 'byte_fallback';
  return 'raw';
}

/** Sentencepiece-style vocabularies put `▁` before the first word. */
function prependsSpace(json: TokenizerJson): boolean {
  const n = json.normalizer;
  const norms = n?.type === 'Sequence' ? (n.normalizers ?? []) : n ? [n] : [];
  if (norms.some((x) => x.type === 'Prepend' && x.prepend === '▁')) return true;
  const p = json.pre_tokenizer;
  return p?.type === 'Metaspace' && p.prepend_scheme !== 'never' && p.add_prefix_space !== false;
}

/** Token texts indexed by id. Special tokens (<|im_start|>, EOS) and ids the tokenizer does not
 * use (padding up to the model's vocab) stay empty, which XGrammar takes as "never text": with
 * their spelling, it would let them into a JSON string. */
export function encodedVocab(json: TokenizerJson, size: number): string[] {
  const vocab = new Array<string>(size).fill('');
  const v = json.model.vocab ?? {};
  const entries: [string, number][] = Array.isArray(v) ? v.map(([t], i) => [t, i]) : Object.entries(v);
  for (const [token, id] of entries) if (id < size) vocab[id] = token;
  for (const t of json.added_tokens ?? []) if (t.id < size) vocab[t.id] = t.special ? '' : t.content;
  return vocab;
}

/** What XGrammar's TokenizerInfo is made from: plain data, so that a worker can make its own. */
export interface VocabInfo {
  vocab: string[];
  type: VocabType;
  prependSpace: boolean;
  vocabSize: number;
  stopIds: number[];
}

export function vocabInfo(json: TokenizerJson, vocabSize: number, stopIds: number[]): VocabInfo {
  // The mask covers the model's logits: vocabSize is theirs (config.json), not the tokenizer's.
  return { vocab: encodedVocab(json, vocabSize), type: vocabType(json), prependSpace: prependsSpace(json), vocabSize, stopIds };
}

export function createTokenizerInfo(xg: XGrammar, v: VocabInfo, gen?: number): Promise<TokenizerInfo> {
  return withReason(() => xg.TokenizerInfo.createTokenizerInfo(v.vocab, v.type, v.prependSpace, v.vocabSize, v.stopIds), gen);
}
