// Reads Hermes-style tool calls out of generated text as it streams: text before a
// call is content; a call shows its name as soon as it is known, then its arguments
// in fragments (what OpenAI's stream deltas carry).
import { CLOSE, OPEN } from './hermes.js';

export type ToolEvent =
  | { kind: 'content'; text: string }
  | { kind: 'call'; index: number; name: string }
  | { kind: 'arguments'; index: number; text: string };

const HEAD = /^\s*\{\s*"name"\s*:\s*("(?:[^"\\]|\\.)*")\s*,\s*"arguments"\s*:\s*(?=\S)/;
const END = new RegExp(`\\}\\s*${CLOSE.replace('/', '\\/')}`);

export class ToolCallParser {
  private buf = '';
  private state: 'text' | 'head' | 'args' = 'text';
  private calls = 0;

  push(text: string): ToolEvent[] {
    this.buf += text;
    const out: ToolEvent[] = [];
    for (;;) {
      if (this.state === 'text') {
        const at = this.buf.indexOf(OPEN);
        const keep = at >= 0 ? at : this.buf.length - partialSuffix(this.buf, OPEN);
        if (keep > 0) out.push({ kind: 'content', text: this.buf.slice(0, keep) });
        this.buf = this.buf.slice(keep);
        if (at < 0) return out;
        this.buf = this.buf.slice(OPEN.length);
        this.state = 'head';
      } else if (this.state === 'head') {
        const m = HEAD.exec(this.buf);
        if (!m) return out;
        out.push({ kind: 'call', index: this.calls, name: JSON.parse(m[1]!) as string });
        this.buf = this.buf.slice(m[0].length);
        this.state = 'args';
      } else {
        const m = END.exec(this.buf);
        if (!m) {
          // Hold back what may be the start of the closing `}\n</tool_call>`.
          const brace = this.buf.lastIndexOf('}');
          const hold = brace >= 0 && `}\n${CLOSE}`.startsWith(this.buf.slice(brace).replace(/\s+/, '\n')) ? this.buf.length - brace : 0;
          const send = this.buf.slice(0, this.buf.length - hold);
          if (send) out.push({ kind: 'arguments', index: this.calls, text: send });
          this.buf = this.buf.slice(send.length);
          return out;
        }
        if (m.index > 0) out.push({ kind: 'arguments', index: this.calls, text: this.buf.slice(0, m.index) });
        this.buf = this.buf.slice(m.index + m[0].length).replace(/^\s+/, '');
        this.calls++;
        this.state = 'text';
      }
    }
  }

  /** The end of the text: what was held back is released as it stands. */
  end(): ToolEvent[] {
    const rest = this.buf;
    this.buf = '';
    if (!rest) return [];
    if (this.state === 'text') return [{ kind: 'content', text: rest }];
    if (this.state === 'args') return [{ kind: 'arguments', index: this.calls, text: rest }];
    return [{ kind: 'content', text: OPEN + rest }]; // a call cut before its name: plain text
  }

  get callCount(): number {
    return this.calls + (this.state === 'args' ? 1 : 0);
  }
}

/** Length of the longest suffix of `s` that is a proper prefix of `tag`. */
function partialSuffix(s: string, tag: string): number {
  for (let n = Math.min(tag.length - 1, s.length); n > 0; n--) if (tag.startsWith(s.slice(s.length - n))) return n;
  return 0;
}

export interface ParsedToolCalls {
  content: string | null;
  calls: { name: string; arguments: string }[];
}

/** The whole text at once: content (null when there is none) and the calls. */
export function parseToolCalls(text: string): ParsedToolCalls {
  const p = new ToolCallParser();
  let content = '';
  const calls: { name: string; arguments: string }[] = [];
  for (const e of [...p.push(text), ...p.end()]) {
    if (e.kind === 'content') content += e.text;
    else if (e.kind === 'call') calls.push({ name: e.name, arguments: '' });
    else calls[e.index]!.arguments += e.text;
  }
  const trimmed = calls.length ? content.trim() : content;
  return { content: trimmed === '' && calls.length ? null : trimmed, calls };
}
