// How much one sequence drafts, step by step, and what its drafts made. A verify step of n tokens
// costs little more than a decode step where the step is bound by reading weights (a GPU; lm_head
// on a CPU), and more where it is bound by compute: so drafts grow while they are accepted,
// shrink to what was accepted, and after a draft of which nothing was accepted the sequence waits
// before drafting again, twice as long after each such miss in a row. A reply that never repeats
// its context then pays for few failed drafts (about log₂ of its length), and one that copies
// pays for none.
import { DEFAULT_LOOKUP, lookupDraft } from './prompt-lookup.js';

/** How speculation is chosen: `off`, or drafts by prompt lookup (`ngram`). */
export type SpeculativeMode = 'off' | 'ngram';

export const SPECULATIVE_MODES: readonly SpeculativeMode[] = ['off', 'ngram'];

/** Where neither the catalog entry nor the server says. */
export const DEFAULT_SPECULATIVE: SpeculativeMode = 'ngram';

/** The longest draft: fused attention on SwiftShader goes wrong from 32 new tokens a run, and longer drafts are rarely all right. */
export const MAX_DRAFT = 16;
const FIRST_DRAFT = 4;
/** The longest wait after misses in a row, in steps. */
const MAX_PAUSE = 64;

export class DraftPolicy {
  /** Tokens drafted, and those sampled equal to their draft (output that took no step of its own), so far. */
  drafted = 0;
  accepted = 0;
  private length = FIRST_DRAFT;
  private pause = 0;
  private misses = 0;
  /** The draft being verified, how many of its tokens the sampled ones matched, and whether one did not. */
  private draft: number[] = [];
  private matched = 0;
  private missed = false;

  /** The draft for the next step (empty: a plain decode step), at most `room` tokens. */
  next(history: readonly number[], room: number): number[] {
    if (this.pause > 0) {
      this.pause--;
      return [];
    }
    return lookupDraft(history, Math.min(this.length, room), DEFAULT_LOOKUP);
  }

  /** A verify step of `draft` starts: took() then hears each token sampled in it. */
  begin(draft: number[]): void {
    this.draft = draft;
    this.matched = 0;
    this.missed = false;
    this.drafted += draft.length;
  }

  /** A sampled token (Sequence.advance tells each): whether it is accepted, equal to its drafted token as all before it were. */
  took(token: number): boolean {
    if (this.missed || this.matched >= this.draft.length || token !== this.draft[this.matched]) {
      this.missed = true;
      return false;
    }
    this.matched++;
    this.accepted++;
    return true;
  }

  /** The verify step is over: the next draft's length follows what was accepted of this one. */
  end(): void {
    const { matched } = this;
    this.length = matched === this.draft.length ? Math.min(MAX_DRAFT, this.length * 2) : Math.max(1, matched + 1);
    if (matched > 0) this.misses = 0;
    else this.pause = Math.min(MAX_PAUSE, 2 ** ++this.misses);
    this.draft = [];
    this.missed = true;
  }
}
