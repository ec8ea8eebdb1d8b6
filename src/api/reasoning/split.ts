// A reasoning model's reply, split into its thinking and its answer as vLLM, SGLang and
// llama.cpp's server hand them to clients: the tags and the whitespace around them dropped.
// Text comes as it is decoded, so a tag may arrive in pieces: what could still be the start of
// one (or whitespace that may come before one) is held until the next text says which it is.
// A reply that does not open with `<think>` is all answer, exactly as the model wrote it.
import type { ThinkingStart } from '../../engine/protocol.js';
import { THINK_CLOSE, THINK_OPEN } from '../../engine/thinking/index.js';

export interface ThinkingParts {
  /** Thinking text released by this piece (may be empty). */
  reasoning: string;
  /** Answer text released by this piece (may be empty). */
  content: string;
}

type Mode = 'start' | 'thinking' | 'thinking-lead' | 'answer' | 'answer-lead';

export class ThinkingSplitter {
  private mode: Mode;
  private held = '';
  /** Whether the reply had a think block (opened by it or by the prompt). */
  thought = false;

  constructor(start: ThinkingStart) {
    this.mode = start === 'free' ? 'start' : start === 'inside' ? 'thinking-lead' : 'answer';
    this.thought = start === 'inside';
  }

  push(text: string): ThinkingParts {
    const out: ThinkingParts = { reasoning: '', content: '' };
    let rest = this.held + text;
    this.held = '';
    while (rest) {
      if (this.mode === 'answer') {
        out.content += rest;
        return out;
      }
      if (this.mode === 'start') {
        const lead = rest.trimStart();
        if (lead.length < THINK_OPEN.length && THINK_OPEN.startsWith(lead)) {
          this.held = rest; // whitespace, or the start of the open tag: not decided yet
          return out;
        }
        if (!lead.startsWith(THINK_OPEN)) {
          this.mode = 'answer';
          continue;
        }
        this.mode = 'thinking-lead';
        this.thought = true;
        rest = lead.slice(THINK_OPEN.length);
      } else if (this.mode === 'thinking-lead' || this.mode === 'answer-lead') {
        rest = rest.trimStart();
        if (rest) this.mode = this.mode === 'thinking-lead' ? 'thinking' : 'answer';
      } else {
        const at = rest.indexOf(THINK_CLOSE);
        if (at >= 0) {
          out.reasoning += rest.slice(0, at).trimEnd();
          this.mode = 'answer-lead';
          rest = rest.slice(at + THINK_CLOSE.length);
          continue;
        }
        // Held back: what may be the start of the close tag, and the whitespace before it.
        const partial = rest.length - partialSuffix(rest, THINK_CLOSE);
        const body = rest.slice(0, partial).trimEnd();
        out.reasoning += body;
        this.held = rest.slice(body.length);
        return out;
      }
    }
    return out;
  }

  /** The end of the reply: what was held is released as it stands (a cut thinking keeps its text). */
  end(): ThinkingParts {
    const held = this.held;
    this.held = '';
    if (this.mode === 'start') return { reasoning: '', content: held };
    if (this.mode === 'thinking') return { reasoning: held.trimEnd(), content: '' };
    return { reasoning: '', content: '' };
  }
}

/** Length of the longest suffix of `s` that is a proper prefix of `tag`. */
function partialSuffix(s: string, tag: string): number {
  for (let n = Math.min(tag.length - 1, s.length); n > 0; n--) if (tag.startsWith(s.slice(s.length - n))) return n;
  return 0;
}

/** A finished reply's parts: `reasoning` null where it had no thinking (no block, or an empty one). */
export function splitThinking(text: string, start: ThinkingStart): { reasoning: string | null; content: string } {
  const s = new ThinkingSplitter(start);
  const a = s.push(text);
  const b = s.end();
  const reasoning = a.reasoning + b.reasoning;
  return { reasoning: s.thought && reasoning ? reasoning : null, content: a.content + b.content };
}
