// A Hugging Face tokenizer.json (a byte-level BPE: Qwen2's) as GGUF tokenizer metadata, as
// llama.cpp's convert_hf_to_gguf.py writes it: the model's tokens and the added ones at their
// ids, ids past them up to the embedding's rows as `[PAD<id>]` (unused), added special tokens
// as control tokens, and llama.cpp's name for the pre-tokenizer's regex. Only the regexes it
// names here are accepted: another would tokenize differently in llama.cpp.
import { TOKEN_CONTROL, TOKEN_NORMAL, TOKEN_UNUSED, TOKEN_USER_DEFINED, type GgufVocab } from './llama.js';

/** Pre-tokenizer regexes (the Split's) and llama.cpp's name for each. */
const PRE_NAMES: Record<string, string> = {
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+": 'qwen2',
};

interface TokenizerJson {
  added_tokens?: { id: number; content: string; special: boolean }[];
  pre_tokenizer?: { type: string; pretokenizers?: { type: string; pattern?: { Regex?: string } }[] };
  model: { type: string; vocab: Record<string, number>; merges: (string | [string, string])[] };
}

export interface HfVocabOptions {
  /** Rows of the embedding (config.json's vocab_size): ids past the tokenizer's are padding. */
  vocabSize: number;
  bos: string;
  eos: string;
  pad: string;
}

export function hfVocab(tokenizerJson: string, o: HfVocabOptions): GgufVocab {
  const t = JSON.parse(tokenizerJson) as TokenizerJson;
  if (t.model.type !== 'BPE') throw new Error(`hfVocab: a BPE tokenizer, not ${t.model.type}`);
  const regex = t.pre_tokenizer?.pretokenizers?.find((p) => p.type === 'Split')?.pattern?.Regex;
  const pre = regex === undefined ? undefined : PRE_NAMES[regex];
  if (!pre) throw new Error(`hfVocab: no llama.cpp pre-tokenizer known for ${JSON.stringify(regex)}`);
  const tokens: (string | undefined)[] = new Array(o.vocabSize);
  const types = new Array<number>(o.vocabSize).fill(TOKEN_NORMAL);
  for (const [token, id] of Object.entries(t.model.vocab)) tokens[id] = token;
  for (const a of t.added_tokens ?? []) {
    tokens[a.id] = a.content;
    types[a.id] = a.special ? TOKEN_CONTROL : TOKEN_USER_DEFINED;
  }
  if (tokens.length > o.vocabSize) throw new Error(`hfVocab: the tokenizer names ${tokens.length} ids, the model has ${o.vocabSize}`);
  const ids = new Map<string, number>();
  const filled = Array.from(tokens, (token, id) => {
    if (token === undefined) {
      types[id] = TOKEN_UNUSED;
      return `[PAD${id}]`;
    }
    ids.set(token, id);
    return token;
  });
  const id = (token: string) => {
    const i = ids.get(token);
    if (i === undefined) throw new Error(`hfVocab: no token ${token}`);
    return i;
  };
  return {
    tokens: filled,
    types,
    merges: t.model.merges.map((m) => (typeof m === 'string' ? m : `${m[0]} ${m[1]}`)),
    pre,
    bos: id(o.bos),
    eos: id(o.eos),
    pad: id(o.pad),
  };
}
