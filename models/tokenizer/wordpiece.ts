// A WordPiece vocabulary in bert-base-uncased's layout, built from the embedded corpus, and
// the tokenizer.json / tokenizer_config.json that BertTokenizerFast writes for it, so that
// transformers.js and Hearth read it as they read a real BERT checkpoint's.
import { CORPUS } from './corpus.js';

/** bert-base-uncased's ids for its special tokens (ids 1 to 99 are its `[unusedN]` tokens). */
export const WORDPIECE_SPECIALS = { '[PAD]': 0, '[UNK]': 100, '[CLS]': 101, '[SEP]': 102, '[MASK]': 103 } as const;

const PUNCTUATION = Array.from('!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~');
const SUFFIXES = ['s', 'es', 'ed', 'ing', 'ly', 'er', 'est', 'ion', 'ness', 'ment'];

/**
 * The vocabulary by id: [PAD], [unused0..98], [UNK], [CLS], [SEP], [MASK], then single
 * characters, their `##` continuations, common suffixes, and the corpus's words (lowercased,
 * most frequent first, up to `words`). Every ASCII word can be spelled from it, so [UNK]
 * stands only for characters outside it (an emoji, say), as in the real vocabulary.
 */
export function wordPieceVocab(words = 600, corpus = CORPUS): string[] {
  const vocab: string[] = ['[PAD]'];
  for (let i = 0; i < 99; i++) vocab.push(`[unused${i}]`);
  vocab.push('[UNK]', '[CLS]', '[SEP]', '[MASK]');
  const chars = [...PUNCTUATION, ...'0123456789', ...'abcdefghijklmnopqrstuvwxyz'];
  vocab.push(...chars, ...chars.filter((c) => /[a-z0-9]/.test(c)).map((c) => `##${c}`), ...SUFFIXES.map((s) => `##${s}`));
  const counts = new Map<string, number>();
  for (const w of corpus.toLowerCase().match(/[a-z]+/g) ?? []) counts.set(w, (counts.get(w) ?? 0) + 1);
  const have = new Set(vocab);
  const ranked = [...counts].filter(([w]) => w.length > 1 && !have.has(w)).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  vocab.push(...ranked.slice(0, words).map(([w]) => w));
  return vocab;
}

const special = (content: string, id: number) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });

/** tokenizer.json as BertTokenizerFast (do_lower_case) saves it: BertNormalizer, BertPreTokenizer, [CLS] a [SEP] b [SEP]. */
export function wordPieceTokenizerJson(vocab: string[]): object {
  const ids: Record<string, number> = {};
  vocab.forEach((t, i) => (ids[t] = i));
  const tok = (t: keyof typeof WORDPIECE_SPECIALS, type_id: number) => ({ SpecialToken: { id: t, type_id } });
  const seq = (id: 'A' | 'B', type_id: number) => ({ Sequence: { id, type_id } });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: Object.entries(WORDPIECE_SPECIALS).map(([t, id]) => special(t, id)),
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [tok('[CLS]', 0), seq('A', 0), tok('[SEP]', 0)],
      pair: [tok('[CLS]', 0), seq('A', 0), tok('[SEP]', 0), seq('B', 1), tok('[SEP]', 1)],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [WORDPIECE_SPECIALS['[CLS]']], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [WORDPIECE_SPECIALS['[SEP]']], tokens: ['[SEP]'] },
      },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab: ids },
  };
}

/** tokenizer_config.json as a BERT cross-encoder ships it (ms-marco-MiniLM's fields). */
export function wordPieceTokenizerConfig(modelMaxLength: number): object {
  const decoder: Record<string, object> = {};
  for (const [t, id] of Object.entries(WORDPIECE_SPECIALS)) {
    const { id: _id, ...rest } = special(t, id);
    decoder[String(id)] = rest;
  }
  return {
    added_tokens_decoder: decoder,
    clean_up_tokenization_spaces: true,
    cls_token: '[CLS]',
    do_basic_tokenize: true,
    do_lower_case: true,
    mask_token: '[MASK]',
    model_max_length: modelMaxLength,
    never_split: null,
    pad_token: '[PAD]',
    sep_token: '[SEP]',
    strip_accents: null,
    tokenize_chinese_chars: true,
    tokenizer_class: 'BertTokenizer',
    unk_token: '[UNK]',
  };
}

export const WORDPIECE_SPECIAL_TOKENS_MAP = { cls_token: '[CLS]', mask_token: '[MASK]', pad_token: '[PAD]', sep_token: '[SEP]', unk_token: '[UNK]' };
