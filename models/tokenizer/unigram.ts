// A SentencePiece Unigram vocabulary in XLM-RoBERTa's layout, built from the embedded corpus,
// and the tokenizer.json / tokenizer_config.json that XLMRobertaTokenizerFast writes for it
// (bge-reranker's tokenizer): no installed package ships a Unigram tokenizer.json to reuse.
import { CORPUS } from './corpus.js';

/** XLM-R's fairseq ids: <s> 0, <pad> 1, </s> 2, <unk> 3; <mask> comes last. */
export const UNIGRAM_SPECIALS = { '<s>': 0, '<pad>': 1, '</s>': 2, '<unk>': 3 } as const;

const SPACE = '\u2581';
const ALPHABET = [
  ...'abcdefghijklmnopqrstuvwxyz',
  ...'ABCDEFGHIJKLMNOPQRSTUVWXYZ',
  ...'0123456789',
  ...'!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~',
  ...'éèêàâçôûüöäß’',
];
const SUFFIXES = ['s', 'es', 'ed', 'ing', 'ly', 'er', 'est', "'s"];

/**
 * Pieces with their log-probability scores, best first as SentencePiece stores them: `▁word`
 * for the corpus's words (cased, as XLM-R's vocabulary is), suffixes, and every character of
 * the alphabet alone and after `▁`, so any text of it has a segmentation; other characters are
 * <unk>. Scores are the log of each piece's share of the corpus, characters last.
 */
export function unigramPieces(words = 600, corpus = CORPUS): [string, number][] {
  const counts = new Map<string, number>();
  for (const w of corpus.match(/[\p{L}\p{N}']+|[^\s\p{L}\p{N}]/gu) ?? []) counts.set(w, (counts.get(w) ?? 0) + 1);
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  const ranked = [...counts].filter(([w]) => w.length > 1).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, words);
  const pieces = new Map<string, number>();
  const put = (p: string, score: number) => pieces.set(p, Math.max(score, pieces.get(p) ?? -Infinity));
  for (const [w, n] of ranked) put(SPACE + w, Math.log(n / total));
  // Punctuation follows words without a space: "France?" is ▁France ?
  for (const [w, n] of counts) if (w.length === 1) put(w, Math.log(n / total));
  SUFFIXES.forEach((s, i) => put(s, -8 - i * 0.1));
  put(SPACE, -9);
  ALPHABET.forEach((c, i) => {
    put(c, -11 - i * 0.01);
    put(SPACE + c, -11.5 - i * 0.01);
  });
  return [...pieces].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([p, s]) => [p, Math.round(s * 1e4) / 1e4]);
}

/** The vocabulary as tokenizer.json's Unigram model lists it: the specials, the pieces, then <mask>. */
export function unigramVocab(words?: number): [string, number][] {
  return [...Object.keys(UNIGRAM_SPECIALS).map((t): [string, number] => [t, 0]), ...unigramPieces(words), ['<mask>', 0]];
}

const added = (content: string, id: number, lstrip = false) => ({ id, content, single_word: false, lstrip, rstrip: false, normalized: false, special: true });

/**
 * tokenizer.json as transformers' XLMRobertaConverter writes it: Precompiled then a Replace of
 * runs of spaces, Metaspace, `<s> A </s></s> B </s>` with every type id 0, Unigram with unk_id 3.
 * The real precompiled_charsmap is SentencePiece's NFKC table (about 300 KB); transformers.js
 * does not read it (its Precompiled normalizer applies NFKC itself), so it is left empty here.
 */
export function unigramTokenizerJson(vocab: [string, number][]): object {
  const tok = (id: string) => ({ SpecialToken: { id, type_id: 0 } });
  const seq = (id: 'A' | 'B') => ({ Sequence: { id, type_id: 0 } });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [...Object.entries(UNIGRAM_SPECIALS).map(([t, id]) => added(t, id)), added('<mask>', vocab.length - 1, true)],
    normalizer: {
      type: 'Sequence',
      normalizers: [
        { type: 'Precompiled', precompiled_charsmap: '' },
        { type: 'Replace', pattern: { Regex: ' {2,}' }, content: ' ' },
      ],
    },
    pre_tokenizer: { type: 'Metaspace', replacement: SPACE, prepend_scheme: 'always', split: true },
    post_processor: {
      type: 'TemplateProcessing',
      single: [tok('<s>'), seq('A'), tok('</s>')],
      pair: [tok('<s>'), seq('A'), tok('</s>'), tok('</s>'), seq('B'), tok('</s>')],
      special_tokens: {
        '<s>': { id: '<s>', ids: [UNIGRAM_SPECIALS['<s>']], tokens: ['<s>'] },
        '</s>': { id: '</s>', ids: [UNIGRAM_SPECIALS['</s>']], tokens: ['</s>'] },
      },
    },
    decoder: { type: 'Metaspace', replacement: SPACE, prepend_scheme: 'always', split: true },
    model: { type: 'Unigram', unk_id: UNIGRAM_SPECIALS['<unk>'], vocab, byte_fallback: false },
  };
}

const MASK = { __type: 'AddedToken', content: '<mask>', lstrip: true, normalized: true, rstrip: false, single_word: false };

/** tokenizer_config.json as bge-reranker's transformers.js export ships it. */
export function unigramTokenizerConfig(modelMaxLength: number): object {
  return {
    bos_token: '<s>',
    clean_up_tokenization_spaces: true,
    cls_token: '<s>',
    eos_token: '</s>',
    mask_token: MASK,
    model_max_length: modelMaxLength,
    pad_token: '<pad>',
    sep_token: '</s>',
    sp_model_kwargs: {},
    tokenizer_class: 'XLMRobertaTokenizer',
    unk_token: '<unk>',
  };
}

export const UNIGRAM_SPECIAL_TOKENS_MAP = { bos_token: '<s>', cls_token: '<s>', eos_token: '</s>', mask_token: MASK, pad_token: '<pad>', sep_token: '</s>', unk_token: '<unk>' };
