// A request's transcript as one stream of deltas across its windows.
import type { TranscriptDelta } from '../protocol.js';

/**
 * The windows' texts as one stream, in order: each window's text trimmed (its leading space
 * dropped, trailing whitespace held until more text follows), windows joined by one space.
 * Windows decode together, so a later window's text waits until the earlier ones end.
 */
export class JoinedStream {
  sent = 0;
  private current = 0;
  private readonly pending = new Map<number, { text: string; logprobs: TranscriptDelta['logprobs'] }[]>();
  private readonly ended = new Set<number>();
  private started = false;
  private windowStarted = false;
  private held = '';

  constructor(
    private readonly onDelta: ((ev: TranscriptDelta) => void) | undefined,
    private readonly withLogprobs: boolean,
  ) {}

  push(index: number, text: string, logprob?: NonNullable<TranscriptDelta['logprobs']>[number]): void {
    if (!this.onDelta) return;
    const item = { text, logprobs: logprob && this.withLogprobs ? [logprob] : undefined };
    if (index !== this.current) {
      const list = this.pending.get(index) ?? [];
      list.push(item);
      this.pending.set(index, list);
      return;
    }
    this.emit(item);
  }

  end(index: number): void {
    if (!this.onDelta) return;
    this.ended.add(index);
    while (this.ended.has(this.current)) {
      this.current++;
      this.windowStarted = false;
      this.held = '';
      for (const item of this.pending.get(this.current) ?? []) this.emit(item);
      this.pending.delete(this.current);
    }
  }

  private emit(item: { text: string; logprobs: TranscriptDelta['logprobs'] }): void {
    let text = item.text;
    if (!this.windowStarted) {
      text = text.trimStart();
      if (!text) return void (item.logprobs && this.send('', item.logprobs));
      this.windowStarted = true;
      if (this.started) text = ' ' + text;
    }
    const body = this.held + text;
    const kept = body.trimEnd();
    this.held = body.slice(kept.length);
    this.send(kept, item.logprobs);
  }

  private send(delta: string, logprobs: TranscriptDelta['logprobs']): void {
    if (!delta && !logprobs) return;
    if (delta) this.started = true;
    this.sent++;
    this.onDelta!(logprobs ? { delta, logprobs } : { delta });
  }
}
