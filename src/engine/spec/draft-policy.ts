// How much one sequence drafts, step by step, and what its drafts made. How likely its next
// drafted token is to be accepted is estimated from its own recent verify steps; what a step of
// n positions costs is measured on the model (step-cost.ts); the draft is as long as makes the
// most tokens a millisecond, and none where no draft beats a plain step. A sequence that stops
// drafting tries a short draft again after a pause, twice as long after each miss in a row, so a
// reply that starts to repeat itself later is still caught, and one that never does pays for
// few failed drafts (about log₂ of its length).
import { DEFAULT_LOOKUP, lookupDraft } from './prompt-lookup.js';
import type { StepCost } from './step-cost.js';

/** How speculation is chosen: `off`, drafts by prompt lookup (`ngram`), or by a draft model (`draft`: a catalog entry's `draft`; prompt lookup for models without one). */
export type SpeculativeMode = 'off' | 'ngram' | 'draft';

export const SPECULATIVE_MODES: readonly SpeculativeMode[] = ['off', 'ngram', 'draft'];

/** Where neither the catalog entry nor the server says. */
export const DEFAULT_SPECULATIVE: SpeculativeMode = 'ngram';

/** The longest draft: fused attention on SwiftShader goes wrong from 32 new tokens a run, and longer drafts are rarely all right. */
export const MAX_DRAFT = 16;
/** The draft a sequence probes with after a pause. */
const PROBE_DRAFT = 2;
/** The longest wait after misses in a row, in steps. */
const MAX_PAUSE = 64;
/** How much older verify steps count in the acceptance estimate next to the latest. */
const DECAY = 0.8;

export class DraftPolicy {
  /** Tokens drafted, and those sampled equal to their draft (output that took no step of its own), so far. */
  drafted = 0;
  accepted = 0;
  /** Decayed counts of drafted tokens accepted, and of drafts cut by a token that was not. */
  private hits = 0;
  private cuts = 0;
  private pause = 0;
  private misses = 0;
  private probe = false;
  /** The draft being verified, how many of its tokens the sampled ones matched, and whether one did not. */
  private draft: number[] = [];
  private matched = 0;
  private missed = true;

  /** The chance that a drafted token is accepted, given the ones before it were (a prior of ½ at first). */
  get acceptance(): number {
    return (this.hits + 1) / (this.hits + this.cuts + 2);
  }

  /** The prompt-lookup draft for the next step (empty: a plain decode step), at most `room` tokens; `cost` sets its length (absent: the longest). */
  next(history: readonly number[], room: number, cost?: StepCost): number[] {
    const length = this.plan(room, cost);
    return length > 0 ? lookupDraft(history, length, DEFAULT_LOOKUP) : [];
  }

  /** How many tokens to draft for the next step (0: a plain decode step), at most `room`. */
  plan(room: number, cost?: StepCost): number {
    if (this.pause > 0) {
      this.pause--;
      return 0;
    }
    const most = Math.min(MAX_DRAFT, room);
    const length = this.probe ? Math.min(PROBE_DRAFT, most) : (cost?.bestDraft(this.acceptance, most) ?? most);
    if (length === 0 && most > 0) {
      // Not worth it at the acceptance seen so far: wait, then probe with a short draft.
      this.pause = Math.min(MAX_PAUSE, 2 ** ++this.misses);
      this.probe = true;
    }
    return length;
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

  /** The verify step is over: its outcome goes into the acceptance estimate. */
  end(): void {
    const { matched } = this;
    const cut = matched < this.draft.length ? 1 : 0;
    this.hits = this.hits * DECAY + matched;
    this.cuts = this.cuts * DECAY + cut;
    this.probe = false;
    if (matched > 0) this.misses = 0;
    else this.pause = Math.min(MAX_PAUSE, 2 ** ++this.misses);
    this.draft = [];
    this.missed = true;
  }
}
