// Keeps constrained output well-formed UTF-8. Byte-level vocabularies hold tokens that
// are single bytes or split characters; XGrammar 0.1.27 takes some malformed sequences
// (overlong forms such as C0 B6, stray continuation bytes) for characters, which a
// decoder then writes as several U+FFFD, overrunning a maxLength or an enum. Under a
// grammar, a token whose bytes cannot continue the text as valid UTF-8 is masked out.

/** Where the text stands in its last character: continuation bytes still due, and the
 * range the next one must fall in (narrower after E0, ED, F0, F4). */
export interface Utf8State {
  need: number;
  lo: number;
  hi: number;
}

export const CLEAN: Utf8State = { need: 0, lo: 0x80, hi: 0xbf };

/** The state after `bytes`, or null when they make the text malformed. */
export function feedUtf8(state: Utf8State, bytes: Uint8Array): Utf8State | null {
  let { need, lo, hi } = state;
  for (const b of bytes) {
    if (need > 0) {
      if (b < lo || b > hi) return null;
      need--;
      lo = 0x80;
      hi = 0xbf;
    } else if (b < 0x80) continue;
    else if (b >= 0xc2 && b <= 0xdf) need = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      if (b === 0xe0) lo = 0xa0;
      if (b === 0xed) hi = 0x9f; // no surrogates
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      if (b === 0xf0) lo = 0x90;
      if (b === 0xf4) hi = 0x8f;
    } else return null;
  }
  return { need, lo, hi };
}

export class Utf8Filter {
  /** Tokens that cannot follow a complete character. */
  private readonly badAfterComplete: number[] = [];
  /** Tokens that begin with a continuation byte (the only ones that can finish a character). */
  private readonly continuing: Uint8Array;

  constructor(private readonly bytes: Uint8Array[]) {
    this.continuing = new Uint8Array(bytes.length);
    bytes.forEach((b, id) => {
      if (b.length === 0) return; // special tokens: no text
      if (b[0]! >= 0x80 && b[0]! <= 0xbf) this.continuing[id] = 1;
      if (feedUtf8(CLEAN, b) === null) this.badAfterComplete.push(id);
    });
  }

  /**
   * Sets to -Infinity every token that would make the text malformed after `state`, unless that
   * would leave no token at all: XGrammar reads some patterns byte by byte (a regex `.` takes one
   * byte, so after a lead byte it wants the next character, not a continuation), and there its
   * choice stands, as malformed text beats a generation with nowhere to go.
   */
  mask(logits: Float32Array, state: Utf8State): void {
    const banned = state.need === 0 ? this.badAfterComplete.filter((id) => logits[id] !== -Infinity) : this.breaking(logits, state);
    if (banned.length === 0 || !survivesWithout(logits, banned)) return;
    for (const id of banned) logits[id] = -Infinity;
  }

  /** Allowed tokens that cannot continue a character begun with `state`. */
  private breaking(logits: Float32Array, state: Utf8State): number[] {
    const out: number[] = [];
    for (let id = 0; id < logits.length; id++) {
      const b = this.bytes[id];
      if (!b || b.length === 0 || logits[id] === -Infinity) continue;
      if (!this.continuing[id] || feedUtf8(state, b) === null) out.push(id);
    }
    return out;
  }

  next(state: Utf8State, id: number): Utf8State {
    return feedUtf8(state, this.bytes[id] ?? new Uint8Array()) ?? CLEAN;
  }
}

/** Whether some token is still allowed once `banned` (allowed ones, no repeats) are masked too. */
function survivesWithout(logits: Float32Array, banned: number[]): boolean {
  let allowed = 0;
  for (let i = 0; i < logits.length; i++) if (logits[i] !== -Infinity && ++allowed > banned.length) return true;
  return false;
}
