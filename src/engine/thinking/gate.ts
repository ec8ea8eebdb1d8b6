// Follows a reasoning model's reply through its think block as it is sampled, and applies a
// grammar (response_format, tools, /generate's) to the answer only: the model thinks freely,
// then answers within the grammar. On the first token the grammar's tokens and the open tag
// are both allowed; inside the block nothing is masked but the end of the reply (there must
// still be an answer); from the close tag on the grammar applies, after the whitespace a model
// writes there (`</think>\n\n`), which the grammar is not fed.
import type { Constraint } from '../structured/index.js';
import type { ThinkingTracker } from './tracker.js';

/** What the scheduler and a sequence need of a constraint. */
export type TokenConstraint = Pick<Constraint, 'mask' | 'accept' | 'dispose'>;

/** Whitespace tokens taken between the close tag and a constrained answer at most. */
const MAX_GAP = 2;

export interface GateTokens {
  /** The open tag's token ids (allowed beside the grammar's on the first token). */
  open: readonly number[];
  /** End-of-reply ids: not allowed inside the block when an answer must follow. */
  eos: readonly number[];
  /** Tokens whose text is all whitespace. */
  whitespace: () => ReadonlySet<number>;
}

export class ThinkingGate implements TokenConstraint {
  private gap = 0;
  /** The whitespace tokens the grammar itself allowed at the last mask (those are its to take). */
  private readonly grammarWhitespace = new Set<number>();

  constructor(
    readonly tracker: ThinkingTracker,
    private readonly tokens: GateTokens,
    /** Absent: nothing is masked; the gate only follows the block. */
    private readonly grammar?: TokenConstraint,
  ) {}

  async mask(logits: Float32Array): Promise<void> {
    if (!this.grammar) return;
    const phase = this.tracker.phase;
    if (phase === 'thinking') {
      for (const id of this.tokens.eos) logits[id] = -Infinity;
      return;
    }
    const free = phase === 'start' ? this.tokens.open : this.gap > 0 ? [...this.tokens.whitespace()] : [];
    if (free.length === 0) return this.grammar.mask(logits);
    const kept = free.map((id) => logits[id]!);
    await this.grammar.mask(logits);
    this.grammarWhitespace.clear();
    free.forEach((id, k) => {
      if (phase === 'answer' && logits[id] !== -Infinity) this.grammarWhitespace.add(id);
      logits[id] = kept[k]!;
    });
  }

  accept(id: number): boolean {
    const before = this.tracker.phase;
    if (!this.grammar) {
      this.tracker.push(id);
      return true;
    }
    if (before === 'start' && !this.tokens.open.includes(id)) {
      this.tracker.answer(); // under a grammar a block opens on the first token or not at all
      return this.grammar.accept(id);
    }
    this.tracker.push(id);
    if (before !== 'answer') {
      if (this.tracker.phase === 'answer') this.gap = MAX_GAP;
      return true;
    }
    if (this.gap > 0 && !this.grammarWhitespace.has(id) && this.tokens.whitespace().has(id)) {
      this.gap--;
      return true;
    }
    this.gap = 0;
    return this.grammar.accept(id);
  }

  dispose(): void {
    this.grammar?.dispose();
  }
}
