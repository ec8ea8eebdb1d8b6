// The tiny-whisper tokenizer: the project's byte-level BPE (text ids first, as GPT-2's are in
// Whisper) followed by Whisper's multilingual special tokens in Whisper's order and names:
// <|endoftext|>, <|startoftranscript|>, the 99 language tokens, <|translate|>, <|transcribe|>,
// <|startoflm|>, <|startofprev|>, <|nospeech|>, <|notimestamps|>, then the 1501 timestamps
// <|0.00|> … <|30.00|>. So every id a Whisper config names sits at the same offset from the end
// of the text vocabulary as in openai/whisper-tiny (there from 50257).
import { BpeEncoder, SPECIAL_TOKENS, type Bpe } from '../tokenizer/bpe.js';

/** Whisper's 99 languages in token order (whisper-tiny … large-v2; large-v3 appends yue). */
export const WHISPER_LANGUAGES = [
  'en', 'zh', 'de', 'es', 'ru', 'ko', 'fr', 'ja', 'pt', 'tr', 'pl', 'ca', 'nl', 'ar', 'sv', 'it', 'id', 'hi', 'fi', 'vi',
  'he', 'uk', 'el', 'ms', 'cs', 'ro', 'da', 'hu', 'ta', 'no', 'th', 'ur', 'hr', 'bg', 'lt', 'la', 'mi', 'ml', 'cy', 'sk',
  'te', 'fa', 'lv', 'bn', 'sr', 'az', 'sl', 'kn', 'et', 'mk', 'br', 'eu', 'is', 'hy', 'ne', 'mn', 'bs', 'kk', 'sq', 'sw',
  'gl', 'mr', 'pa', 'si', 'km', 'sn', 'yo', 'so', 'af', 'oc', 'ka', 'be', 'tg', 'sd', 'gu', 'am', 'yi', 'lo', 'uz', 'fo',
  'ht', 'ps', 'tk', 'nn', 'mt', 'sa', 'lb', 'my', 'bo', 'tl', 'mg', 'as', 'tt', 'haw', 'ln', 'ha', 'ba', 'jw', 'su',
] as const;

/** Timestamp tokens: 0.00 s … 30.00 s every 0.02 s. */
export const TIMESTAMP_COUNT = 1501;

/** The special tokens after the text vocabulary, in id order (timestamps not included). */
export const WHISPER_SPECIALS = [
  '<|endoftext|>',
  '<|startoftranscript|>',
  ...WHISPER_LANGUAGES.map((l) => `<|${l}|>`),
  '<|translate|>',
  '<|transcribe|>',
  '<|startoflm|>',
  '<|startofprev|>',
  '<|nospeech|>',
  '<|notimestamps|>',
];

export const timestampToken = (k: number) => `<|${(k * 0.02).toFixed(2)}|>`;

export interface WhisperVocab {
  /** The text BPE (its own chat specials dropped). */
  text: Bpe;
  textSize: number;
  /** Every token by id: text, specials, timestamps. */
  tokens: string[];
  ids: Record<string, number>;
  eot: number;
  sot: number;
  translate: number;
  transcribe: number;
  startOfLm: number;
  startOfPrev: number;
  noSpeech: number;
  noTimestamps: number;
  /** <|0.00|>; timestamp k is timestampBegin + k. */
  timestampBegin: number;
  vocabSize: number;
}

/** The vocabulary over `bpe`'s text tokens (the chat specials that trainBpe appends are left out). */
export function whisperVocab(bpe: Bpe): WhisperVocab {
  const textTokens = bpe.vocab.filter((t) => !(SPECIAL_TOKENS as readonly string[]).includes(t));
  if (textTokens.some((t, i) => bpe.vocab[i] !== t)) throw new Error('the BPE specials are expected after its text tokens');
  const text: Bpe = { ...bpe, vocab: textTokens };
  const tokens = [...textTokens, ...WHISPER_SPECIALS, ...Array.from({ length: TIMESTAMP_COUNT }, (_, k) => timestampToken(k))];
  const ids = Object.fromEntries(tokens.map((t, i) => [t, i]));
  return {
    text,
    textSize: textTokens.length,
    tokens,
    ids,
    eot: ids['<|endoftext|>']!,
    sot: ids['<|startoftranscript|>']!,
    translate: ids['<|translate|>']!,
    transcribe: ids['<|transcribe|>']!,
    startOfLm: ids['<|startoflm|>']!,
    startOfPrev: ids['<|startofprev|>']!,
    noSpeech: ids['<|nospeech|>']!,
    noTimestamps: ids['<|notimestamps|>']!,
    timestampBegin: ids[timestampToken(0)]!,
    vocabSize: tokens.length,
  };
}

/**
 * generation_config.suppress_tokens as openai-whisper's tokenizer.non_speech_tokens computes it
 * (symbols that are one token alone or after a space, " -" and " '"), plus the specials HF's
 * configs add: <|startoftranscript|>, <|translate|>, <|transcribe|>, <|startoflm|>,
 * <|startofprev|>, <|nospeech|>.
 */
export function suppressTokens(v: WhisperVocab): number[] {
  const enc = new BpeEncoder(v.text);
  const symbols = [...'"#()*+/:;<=>@[\\]^_`{|}~「」『』', ...'<< >> <<< >>> -- --- -( -[ (\' (" (( )) ((( ))) [[ ]] {{ }} ♪♪ ♪♪♪'.split(' ')];
  const misc = [...'♩♪♫♬♭♮♯'];
  // " -" and " '" are one token each in GPT-2's vocabulary; here they count only when they are one too.
  const out = new Set<number>([' -', " '"].map((s) => enc.encode(s)).filter((ids) => ids.length === 1).map((ids) => ids[0]!));
  for (const s of [...symbols, ...misc]) {
    // (A bare space would be the first token of " ♪" here, where GPT-2 has one for " â": it is left out.)
    for (const ids of [enc.encode(s), enc.encode(' ' + s)]) if ((ids.length === 1 || misc.includes(s)) && v.text.vocab[ids[0]!] !== 'Ġ') out.add(ids[0]!);
  }
  for (const id of [v.sot, v.translate, v.transcribe, v.startOfLm, v.startOfPrev, v.noSpeech]) out.add(id);
  return [...out].sort((a, b) => a - b);
}

/** tokenizer.json as Hugging Face writes Whisper's: byte-level BPE, the specials as added tokens (timestamps not special). */
export function whisperTokenizerJson(v: WhisperVocab): object {
  const vocab: Record<string, number> = {};
  v.text.vocab.forEach((t, i) => (vocab[t] = i));
  vocab['<|endoftext|>'] = v.eot;
  const added = v.tokens.slice(v.textSize).map((content, i) => ({
    id: v.textSize + i,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: i < WHISPER_SPECIALS.length,
  }));
  const special = (id: string) => ({ SpecialToken: { id, type_id: 0 } });
  const seq = (id: string) => ({ Sequence: { id, type_id: 0 } });
  const specialEntry = (t: string) => [t, { id: t, ids: [v.ids[t]!], tokens: [t] }];
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    // As Whisper's: <|startoftranscript|> <|notimestamps|> … <|endoftext|> around the text.
    post_processor: {
      type: 'TemplateProcessing',
      single: [special('<|startoftranscript|>'), special('<|notimestamps|>'), seq('A'), special('<|endoftext|>')],
      pair: [special('<|startoftranscript|>'), special('<|notimestamps|>'), seq('A'), seq('B'), special('<|endoftext|>')],
      special_tokens: Object.fromEntries(['<|endoftext|>', '<|notimestamps|>', '<|startoftranscript|>'].map(specialEntry)),
    },
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
      merges: v.text.merges.map(([a, b]) => `${a} ${b}`),
    },
  };
}

/** tokenizer_config.json as openai/whisper-tiny's (WhisperTokenizer, the specials in added_tokens_decoder). */
export function whisperTokenizerConfig(v: WhisperVocab): object {
  const decoder: Record<string, object> = {};
  v.tokens.slice(v.textSize).forEach((content, i) => {
    decoder[String(v.textSize + i)] = { content, lstrip: false, normalized: false, rstrip: false, single_word: false, special: i < WHISPER_SPECIALS.length };
  });
  return {
    add_bos_token: false,
    add_prefix_space: false,
    added_tokens_decoder: decoder,
    additional_special_tokens: WHISPER_SPECIALS,
    bos_token: '<|endoftext|>',
    clean_up_tokenization_spaces: true,
    eos_token: '<|endoftext|>',
    errors: 'replace',
    model_max_length: 1024,
    pad_token: '<|endoftext|>',
    processor_class: 'WhisperProcessor',
    return_attention_mask: false,
    tokenizer_class: 'WhisperTokenizer',
    unk_token: '<|endoftext|>',
  };
}
