/**
 * Finds stop strings in generated text as it grows, across token boundaries.
 * Text that could still turn out to be the start of a stop string is held back,
 * so a client never sees part of a stop string that is later trimmed.
 */
export class StopMatcher {
  private text = '';
  private emitted = 0;
  private readonly longest: number;

  constructor(private readonly stops: readonly string[]) {
    this.longest = Math.max(0, ...stops.map((s) => s.length));
  }

  /** Adds newly decoded text. Returns the text now safe to show, and the stop string if one matched. */
  push(delta: string): { emit: string; matched: string | null } {
    this.text += delta;
    const from = Math.max(0, this.emitted - this.longest);
    let at = -1;
    let matched: string | null = null;
    for (const stop of this.stops) {
      if (!stop) continue;
      const i = this.text.indexOf(stop, from);
      if (i !== -1 && (at === -1 || i < at)) {
        at = i;
        matched = stop;
      }
    }
    if (matched !== null) {
      this.text = this.text.slice(0, at);
      return { emit: this.take(this.text.length), matched };
    }
    return { emit: this.take(this.text.length - this.heldBack()), matched: null };
  }

  /** At the end of generation: whatever was held back is real text after all. */
  flush(): string {
    return this.take(this.text.length);
  }

  /** All text so far, with a matched stop string trimmed. */
  get value(): string {
    return this.text;
  }

  private take(upTo: number): string {
    if (upTo <= this.emitted) return '';
    const out = this.text.slice(this.emitted, upTo);
    this.emitted = upTo;
    return out;
  }

  /** Length of the longest tail of the text that is a proper prefix of some stop string. */
  private heldBack(): number {
    let best = 0;
    for (const stop of this.stops) {
      for (let k = Math.min(stop.length - 1, this.text.length); k > best; k--) {
        if (this.text.endsWith(stop.slice(0, k))) {
          best = k;
          break;
        }
      }
    }
    return best;
  }
}
