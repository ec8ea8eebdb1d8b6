import { EngineError } from '../errors.js';
import { allowsAny } from './compile.js';
import { forcedTokens, type Encode } from './forced.js';
import { CLEAN, type Utf8Filter, type Utf8State } from './utf8.js';
import { retireXGrammar, type GrammarMatcher } from './xgrammar.js';

/** An XGrammar call that failed while a generation ran: the instance is retired, and only
 * that generation ends (503: a retry gets a fresh instance). */
function grammarFailure(e: unknown, gen: number): EngineError {
  retireXGrammar(gen);
  const why = e instanceof Error ? e.message : String(e);
  return new EngineError('engine_crashed', `The grammar engine failed on this request (${why}); it has been restarted, retry the request`);
}

/** One generation's grammar state: which tokens may come next, and the tokens taken so far. */
export class Constraint {
  private disposed = false;
  private utf8State: Utf8State = CLEAN;
  /** Set when a call into XGrammar failed: the next mask() reports it (accept() runs where it cannot throw). */
  private broken?: EngineError;
  /** The tokens still to write of the text the grammar forces, found once for the whole text. */
  private forced: number[] = [];

  constructor(
    private readonly matcher: GrammarMatcher,
    private readonly utf8: Utf8Filter | undefined,
    /** The XGrammar instance the matcher lives in (see xgrammarGeneration). */
    private readonly gen: number,
    private readonly vocabSize: number,
    /** Where given, text the grammar forces is written in this encoding's tokens (see forced.ts;
     * only for a grammar whose forced text is bounded, forced-bound.ts). */
    private readonly encode?: Encode,
  ) {}

  /** Sets every token the grammar forbids next to -Infinity, in place. */
  async mask(logits: Float32Array): Promise<void> {
    if (this.broken) throw this.broken;
    if (this.disposed) return;
    let bits: Int32Array;
    try {
      bits = await this.matcher.getNextTokenBitmask();
    } catch (e) {
      throw (this.broken = grammarFailure(e, this.gen));
    }
    if (!allowsAny(bits, this.vocabSize)) {
      // Sampling from nothing has no answer; the grammar has led where no token, not even the end, may follow.
      throw new EngineError('invalid_value', 'The grammar allows no further output here (nothing it accepts continues this text).');
    }
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
    if (this.encode) this.keepForced(logits);
  }

  /** Where the grammar allows one text only, leaves the next token of its own encoding alone
   * allowed (unless the mask forbids that token: then every spelling the grammar allows stays). */
  private keepForced(logits: Float32Array): void {
    if (this.forced.length === 0) {
      let text: string;
      try {
        text = this.matcher.findJumpForwardString();
      } catch (e) {
        throw (this.broken = grammarFailure(e, this.gen));
      }
      this.forced = forcedTokens(text, this.encode!);
    }
    const id = this.forced[0];
    if (id === undefined) return;
    if (!(logits[id]! > -Infinity)) {
      this.forced = [];
      return;
    }
    const kept = logits[id]!;
    logits.fill(-Infinity);
    logits[id] = kept;
  }

  /** Advances the grammar past the sampled token. Never throws: a failure shows at the next mask(). */
  accept(id: number): boolean {
    if (this.disposed || this.broken) return false;
    if (this.utf8) this.utf8State = this.utf8.next(this.utf8State, id);
    // Past the forced token, the rest of the forced text is still forced; past any other, found again.
    if (this.forced[0] === id) this.forced.shift();
    else this.forced = [];
    try {
      return this.matcher.acceptToken(id);
    } catch (e) {
      this.broken = grammarFailure(e, this.gen);
      return false;
    }
  }

  /** Frees the matcher. Never throws: it runs while a generation is being failed or finished. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    try {
      this.matcher.dispose();
    } catch {
      retireXGrammar(this.gen); // the instance is broken; what it still holds is dropped with it
    }
  }
}

/**
 * Masks each row of one step's logits by its sequence's grammar (rows without one are left as
 * they are). A row whose grammar fails is failed alone (`fail`), the others are masked as usual.
 */
export async function maskRows(rows: { constraint?: Pick<Constraint, 'mask'>; fail?(error: unknown): void }[], logits: Float32Array[]): Promise<void> {
  // One at a time: a bitmask may be a view of XGrammar's heap that the next call reuses.
  for (const [r, s] of rows.entries()) {
    try {
      await s.constraint?.mask(logits[r]!);
    } catch (e) {
      if (!s.fail) throw e;
      s.fail(e);
    }
  }
}
