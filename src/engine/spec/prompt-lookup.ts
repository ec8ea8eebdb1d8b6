// Prompt lookup (llama.cpp's `ngram` speculation, vLLM's n-gram proposer): the tokens that
// followed the last occurrence of the sequence's own last n tokens, earlier in its prompt or
// output, are guessed to follow again. It costs no second model, and it is right where a reply
// copies its input: a summary's phrases, a quoted passage, a code edit, JSON echoing its input.

export interface LookupOptions {
  /** The longest suffix matched (longer matches are tried first: they guess better). */
  maxNgram: number;
  /** The shortest. */
  minNgram: number;
}

export const DEFAULT_LOOKUP: LookupOptions = { maxNgram: 3, minNgram: 1 };

/**
 * Up to `count` tokens guessed to follow `history`: after the latest earlier occurrence of its
 * last n tokens (n from maxNgram down to minNgram), what followed it there. Where that runs into
 * the end of the history, the copy goes on over the tokens it has just drafted (as an LZ77 copy
 * overlaps itself): a reply caught in a loop of p tokens is drafted as that loop, not p tokens at
 * a time. Empty when nothing matches.
 */
export function lookupDraft(history: readonly number[], count: number, opts: LookupOptions = DEFAULT_LOOKUP): number[] {
  const end = history.length;
  if (count <= 0) return [];
  for (let n = Math.min(opts.maxNgram, end - 1); n >= opts.minNgram; n--) {
    // Latest first: the nearest context is the likeliest to repeat.
    for (let start = end - n - 1; start >= 0; start--) {
      let k = 0;
      while (k < n && history[start + k] === history[end - n + k]) k++;
      if (k < n) continue;
      const from = start + n;
      const draft: number[] = [];
      for (let i = 0; i < count; i++) draft.push(from + i < end ? history[from + i]! : draft[from + i - end]!);
      return draft;
    }
  }
  return [];
}
