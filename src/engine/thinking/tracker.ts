// Follows a reply token by token through its think block: before it (the first tokens may open
// one), inside it, or in the answer. Tags are matched on the tokens' text, so a tag spelled in
// several tokens is found as well as one that is a token of its own.
import type { ThinkingStart } from '../protocol.js';
import { THINK_CLOSE, THINK_OPEN } from './tags.js';

export type ThinkingPhase = 'start' | 'thinking' | 'answer';

export class ThinkingTracker {
  phase: ThinkingPhase;
  /** Tokens of the think block so far, its tags included (0 until a block has opened). */
  reasoningTokens = 0;
  /** Text not yet decided on: before the block, what may be the start of `<think>`; inside, what may be the start of `</think>`. */
  private text = '';
  private pending = 0;

  constructor(
    start: ThinkingStart,
    private readonly tokenText: (id: number) => string,
  ) {
    this.phase = start === 'inside' ? 'thinking' : start === 'after' ? 'answer' : 'start';
  }

  /** The reply is an answer from here on (no block, or no more of one). */
  answer(): void {
    this.phase = 'answer';
  }

  push(id: number): void {
    if (this.phase === 'answer') return;
    this.text += this.tokenText(id);
    if (this.phase === 'start') {
      this.pending++;
      const lead = this.text.trimStart();
      if (lead.length < THINK_OPEN.length && THINK_OPEN.startsWith(lead)) return; // not decided yet
      if (!lead.startsWith(THINK_OPEN)) {
        this.phase = 'answer';
        return;
      }
      this.phase = 'thinking';
      this.reasoningTokens = this.pending;
      this.text = lead.slice(THINK_OPEN.length);
    } else {
      this.reasoningTokens++;
    }
    if (this.text.includes(THINK_CLOSE)) this.phase = 'answer';
    else this.text = this.text.slice(-(THINK_CLOSE.length - 1));
  }
}
