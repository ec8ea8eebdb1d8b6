import { CLEAN, type Utf8Filter, type Utf8State } from './utf8.js';
import type { GrammarMatcher } from './xgrammar.js';

/** One generation's grammar state: which tokens may come next, and the tokens taken so far. */
export class Constraint {
  private disposed = false;
  private utf8State: Utf8State = CLEAN;

  constructor(
    private readonly matcher: GrammarMatcher,
    private readonly utf8?: Utf8Filter,
  ) {}

  /** Sets every token the grammar forbids next to -Infinity, in place. */
  async mask(logits: Float32Array): Promise<void> {
    const bits = await this.matcher.getNextTokenBitmask();
    for (let w = 0; w < bits.length; w++) {
      const word = bits[w]!;
      if (word === -1) continue; // all 32 allowed
      const end = Math.min(logits.length, (w + 1) * 32);
      if (word === 0) {
        logits.fill(-Infinity, w * 32, end);
        continue;
      }
      for (let i = w * 32; i < end; i++) if (((word >>> (i & 31)) & 1) === 0) logits[i] = -Infinity;
    }
    this.utf8?.mask(logits, this.utf8State);
  }

  /** Advances the grammar past the sampled token. */
  accept(id: number): boolean {
    if (this.utf8) this.utf8State = this.utf8.next(this.utf8State, id);
    return this.matcher.acceptToken(id);
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.matcher.dispose();
  }
}

/** Masks each row of one step's logits by its sequence's grammar (rows without one are left as they are). */
export async function maskRows(rows: { constraint?: Constraint }[], logits: Float32Array[]): Promise<void> {
  // One at a time: a bitmask may be a view of XGrammar's heap that the next call reuses.
  for (const [r, s] of rows.entries()) await s.constraint?.mask(logits[r]!);
}
