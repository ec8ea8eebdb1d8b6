// Byte-level BPE: deterministic training from the embedded corpus, an encoder that
// matches Hugging Face's, and the tokenizer.json / tokenizer_config.json objects.
import { CORPUS } from './corpus.js';

export const SPECIAL_TOKENS = ['<|endoftext|>', '<|im_start|>', '<|im_end|>'] as const;
export const DEFAULT_VOCAB_SIZE = 512;

export const CHATML_TEMPLATE =
  "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

/** The GPT-2 byte → printable character table. */
export const BYTE_TO_CHAR: readonly string[] = (() => {
  const bs: number[] = [];
  for (let b = 33; b <= 126; b++) bs.push(b);
  for (let b = 161; b <= 172; b++) bs.push(b);
  for (let b = 174; b <= 255; b++) bs.push(b);
  const table = new Array<string>(256);
  let extra = 0;
  for (let b = 0; b < 256; b++) {
    if (bs.includes(b)) table[b] = String.fromCharCode(b);
    else table[b] = String.fromCharCode(256 + extra++);
  }
  return table;
})();

const CHAR_TO_BYTE = new Map(BYTE_TO_CHAR.map((c, b) => [c, b]));

/** The pre-tokenizer pattern of GPT-2 (ByteLevel with use_regex). */
export const PRETOKENIZE = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;

export function byteLevel(piece: string): string {
  return Array.from(new TextEncoder().encode(piece), (b) => BYTE_TO_CHAR[b]!).join('');
}

export function pretokenize(text: string): string[] {
  return (text.match(PRETOKENIZE) ?? []).map(byteLevel);
}

export interface Bpe {
  /** Token strings by id (byte-level characters; specials verbatim). */
  vocab: string[];
  /** Merges in rank order. */
  merges: [string, string][];
  specialIds: Record<(typeof SPECIAL_TOKENS)[number], number>;
}

/** Words that must come out as single tokens (boosted during training). */
const REQUIRED_WORDS = ['user', 'assistant', 'system'];

export function trainBpe(vocabSize = DEFAULT_VOCAB_SIZE, corpus = CORPUS): Bpe {
  const counts = new Map<string, number>();
  for (const w of pretokenize(corpus)) counts.set(w, (counts.get(w) ?? 0) + 1);
  for (const w of REQUIRED_WORDS) counts.set(w, (counts.get(w) ?? 0) + 1000);
  const words = [...counts.entries()]
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map(([w, n]) => ({ symbols: Array.from(w), n }));

  const vocab = BYTE_TO_CHAR.slice();
  const merges: [string, string][] = [];
  const target = vocabSize - SPECIAL_TOKENS.length;
  const isSpace = (s: string) => /^[ĠĊĉč]+$/.test(s);
  while (vocab.length < target) {
    const pairs = new Map<string, number>();
    for (const w of words) {
      for (let i = 0; i + 1 < w.symbols.length; i++) {
        const a = w.symbols[i]!;
        const b = w.symbols[i + 1]!;
        if (isSpace(a) && isSpace(b)) continue;
        const key = `${a} ${b}`;
        pairs.set(key, (pairs.get(key) ?? 0) + w.n);
      }
    }
    let best: string | null = null;
    let bestN = 0;
    for (const [k, n] of pairs) {
      if (n > bestN || (n === bestN && best !== null && k < best)) {
        best = k;
        bestN = n;
      }
    }
    if (best === null) break;
    const [a, b] = best.split(' ') as [string, string];
    merges.push([a, b]);
    vocab.push(a + b);
    for (const w of words) {
      const s = w.symbols;
      const out: string[] = [];
      for (let i = 0; i < s.length; i++) {
        if (i + 1 < s.length && s[i] === a && s[i + 1] === b) {
          out.push(a + b);
          i++;
        } else out.push(s[i]!);
      }
      w.symbols = out;
    }
  }
  // Pad with nothing: if the corpus ran out of pairs the vocabulary is just smaller.
  const specialIds = {} as Bpe['specialIds'];
  for (const t of SPECIAL_TOKENS) {
    specialIds[t] = vocab.length;
    vocab.push(t);
  }
  return { vocab, merges, specialIds };
}

/** Encodes text exactly as the Hugging Face tokenizer built from `tokenizerJson` does. */
export class BpeEncoder {
  private readonly ids = new Map<string, number>();
  private readonly ranks = new Map<string, number>();
  private readonly specialRe: RegExp;

  constructor(readonly bpe: Bpe) {
    bpe.vocab.forEach((t, i) => this.ids.set(t, i));
    bpe.merges.forEach(([a, b], i) => this.ranks.set(`${a} ${b}`, i));
    const esc = SPECIAL_TOKENS.map((t) => t.replace(/[|]/g, '\\|'));
    this.specialRe = new RegExp(`(${esc.join('|')})`);
  }

  private word(w: string): number[] {
    let s = Array.from(w);
    for (;;) {
      let bestRank = Infinity;
      let at = -1;
      for (let i = 0; i + 1 < s.length; i++) {
        const r = this.ranks.get(`${s[i]} ${s[i + 1]}`);
        if (r !== undefined && r < bestRank) {
          bestRank = r;
          at = i;
        }
      }
      if (at < 0) break;
      s = [...s.slice(0, at), s[at]! + s[at + 1]!, ...s.slice(at + 2)];
    }
    return s.map((t) => this.ids.get(t)!);
  }

  encode(text: string): number[] {
    const out: number[] = [];
    for (const part of text.split(this.specialRe)) {
      if (!part) continue;
      const special = this.ids.get(part);
      if (special !== undefined && (SPECIAL_TOKENS as readonly string[]).includes(part)) {
        out.push(special);
        continue;
      }
      for (const w of pretokenize(part)) out.push(...this.word(w));
    }
    return out;
  }

  /** The bytes a token stands for (specials: their UTF-8 text). */
  tokenBytes(id: number): Uint8Array {
    const t = this.bpe.vocab[id]!;
    if ((SPECIAL_TOKENS as readonly string[]).includes(t)) return new TextEncoder().encode(t);
    return Uint8Array.from(Array.from(t, (c) => CHAR_TO_BYTE.get(c)!));
  }

  decode(ids: readonly number[]): string {
    const bytes: number[] = [];
    for (const id of ids) bytes.push(...this.tokenBytes(id));
    return new TextDecoder().decode(Uint8Array.from(bytes));
  }

  isSpecial(id: number): boolean {
    return id >= this.bpe.vocab.length - SPECIAL_TOKENS.length;
  }
}

export function tokenizerJson(bpe: Bpe): object {
  const vocab: Record<string, number> = {};
  bpe.vocab.forEach((t, i) => {
    if (!(SPECIAL_TOKENS as readonly string[]).includes(t)) vocab[t] = i;
  });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIAL_TOKENS.map((content) => ({
      id: bpe.specialIds[content],
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: true },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab,
      merges: bpe.merges.map(([a, b]) => `${a} ${b}`),
    },
  };
}

export function tokenizerConfig(bpe: Bpe, options: { chatTemplate: boolean; modelMaxLength: number }): object {
  const decoder: Record<string, object> = {};
  for (const t of SPECIAL_TOKENS) {
    decoder[String(bpe.specialIds[t])] = { content: t, lstrip: false, normalized: false, rstrip: false, single_word: false, special: true };
  }
  return {
    add_bos_token: false,
    add_eos_token: false,
    add_prefix_space: false,
    added_tokens_decoder: decoder,
    additional_special_tokens: ['<|im_start|>', '<|im_end|>'],
    bos_token: null,
    eos_token: options.chatTemplate ? '<|im_end|>' : '<|endoftext|>',
    pad_token: '<|endoftext|>',
    unk_token: null,
    clean_up_tokenization_spaces: false,
    errors: 'replace',
    model_max_length: options.modelMaxLength,
    split_special_tokens: false,
    tokenizer_class: 'PreTrainedTokenizerFast',
    ...(options.chatTemplate ? { chat_template: CHATML_TEMPLATE } : {}),
  };
}
