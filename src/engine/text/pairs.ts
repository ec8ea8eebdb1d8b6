// A cross-encoder's input: two texts in the tokenizer's pair template ([CLS] a [SEP] b [SEP],
// <s> a </s></s> b </s>), cut to the model's length longest first, as sentence-transformers'
// CrossEncoder has its (fast, Rust) tokenizer do it. transformers.js's own truncation cuts the
// tail of the whole pair instead (its closing [SEP] with it), so the texts are truncated here,
// before the template adds its special tokens, as the Rust tokenizer does.
import type { PreTrainedTokenizer } from '@huggingface/transformers';

export interface PairEncoding {
  ids: number[];
  /** token_type_ids, as the template gives them (0 for a, 1 for b in BERT's; all 0 in RoBERTa's). */
  types: number[];
}

/** What pair encoding uses of transformers.js's tokenizer (@huggingface/tokenizers' Tokenizer, `_tokenizer`). */
interface TokenizerCore {
  encode_text(text: string): string[] | null;
  post_processor: ((a: string[], b: string[] | null, addSpecial: boolean) => { tokens: string[]; token_type_ids?: number[]; tokens_pair?: string[] }) | null;
  token_to_id(token: string): number | undefined;
}

export class PairEncoder {
  readonly #core: TokenizerCore;
  readonly #unk: number;
  /** Special tokens the template adds to a pair: the texts share what is left of `maxLength`. */
  readonly specials: number;

  constructor(
    tokenizer: PreTrainedTokenizer,
    /** The longest pair, special tokens included. */
    readonly maxLength: number,
  ) {
    const core = (tokenizer as unknown as { _tokenizer?: Partial<TokenizerCore> })._tokenizer;
    if (typeof core?.encode_text !== 'function' || typeof core.token_to_id !== 'function' || !('post_processor' in core)) {
      throw new Error("this version of transformers.js's tokenizer does not expose what pair encoding needs (encode_text, post_processor)");
    }
    this.#core = core as TokenizerCore;
    this.#unk = tokenizer.unk_token_id ?? 0;
    this.specials = this.#template([], []).tokens.length;
    if (this.specials >= maxLength) throw new Error(`a pair's special tokens (${this.specials}) leave no room in ${maxLength} tokens`);
  }

  encode(a: string, b: string): PairEncoding {
    const [ta, tb] = truncateLongestFirst(this.#core.encode_text(a) ?? [], this.#core.encode_text(b) ?? [], this.maxLength - this.specials);
    const { tokens, types } = this.#template(ta, tb);
    // An unknown piece (a Unigram model's unmatched character) is the unknown token, as encode() maps it.
    return { ids: tokens.map((t) => this.#core.token_to_id(t) ?? this.#unk), types };
  }

  #template(a: string[], b: string[]): { tokens: string[]; types: number[] } {
    const out = this.#core.post_processor?.(a, b, true);
    if (!out?.token_type_ids) {
      // No template (or a byte-level one, which adds nothing): the texts one after the other.
      return { tokens: [...a, ...b], types: [...a.map(() => 0), ...b.map(() => 1)] };
    }
    return { tokens: out.tokens, types: out.token_type_ids };
  }
}

/**
 * The two sequences cut to `room` tokens in all, longest first, as the Rust tokenizers'
 * TruncationStrategy::LongestFirst does: the longer loses tokens until both are as long, then
 * each keeps half of `room`, the longer (the second, when equal) the odd one more.
 */
export function truncateLongestFirst<T>(a: T[], b: T[], room: number): [T[], T[]] {
  if (a.length + b.length <= room) return [a, b];
  const swap = a.length > b.length;
  let short = swap ? b.length : a.length;
  let long: number;
  if (short > room) long = short;
  else long = Math.max(short, room - short);
  if (short + long > room) {
    short = Math.floor(room / 2);
    long = short + (room % 2);
  }
  const [na, nb] = swap ? [long, short] : [short, long];
  return [a.slice(0, na), b.slice(0, nb)];
}
