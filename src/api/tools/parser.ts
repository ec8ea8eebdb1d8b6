// Reads tool calls out of generated text as it streams, in the model's own syntax: text
// before a call is content; a call shows its name as soon as it is known, then its
// arguments in fragments (what OpenAI's stream deltas carry). The grammar makes the
// arguments one JSON object, so their end is where its braces balance.
import type { ToolSyntax } from '../../engine/protocol.js';
import { SYNTAXES, type Syntax } from './syntax.js';

export type ToolEvent =
  | { kind: 'content'; text: string }
  | { kind: 'call'; index: number; name: string }
  | { kind: 'arguments'; index: number; text: string };

export class ToolCallParser {
  private buf = '';
  private state: 'text' | 'head' | 'args' | 'tail' | 'next' = 'text';
  private calls = 0;
  /** Inside the arguments: open braces and brackets, and where a string stands. */
  private depth = 0;
  private inString = false;
  private escaped = false;
  private readonly s: Syntax;

  constructor(syntax: ToolSyntax = 'hermes') {
    this.s = SYNTAXES[syntax];
  }

  push(text: string): ToolEvent[] {
    this.buf += text;
    const out: ToolEvent[] = [];
    for (;;) {
      if (this.state === 'text') {
        const at = this.buf.indexOf(this.s.trigger);
        const keep = at >= 0 ? at : this.buf.length - partialSuffix(this.buf, this.s.trigger);
        if (keep > 0) out.push({ kind: 'content', text: this.buf.slice(0, keep) });
        this.buf = this.buf.slice(keep);
        if (at < 0) return out;
        this.buf = this.buf.slice(this.s.trigger.length);
        this.state = 'head';
      } else if (this.state === 'head') {
        const m = this.s.readHead.exec(this.buf);
        if (!m) return out;
        out.push({ kind: 'call', index: this.calls, name: JSON.parse(m[1]!) as string });
        this.buf = this.buf.slice(m[0].length);
        this.state = 'args';
      } else if (this.state === 'args') {
        const end = this.argumentsEnd();
        const send = this.buf.slice(0, end ?? this.buf.length);
        if (send) out.push({ kind: 'arguments', index: this.calls, text: send });
        this.buf = this.buf.slice(send.length);
        if (end === undefined) return out;
        this.calls++;
        this.state = 'tail';
      } else {
        const m = (this.state === 'tail' ? this.s.readTail : this.s.readNext)?.exec(this.buf);
        const last = this.state === 'next' ? this.s.readEnd?.exec(this.buf) : undefined;
        if (!m && !last) {
          if (this.state === 'tail' || /^\s*$/.test(this.buf)) return out;
          this.state = 'text'; // a list that went on some other way: the rest is text
          continue;
        }
        this.buf = this.buf.slice((m ?? last)![0].length);
        this.state = this.state === 'tail' ? (this.s.list ? 'next' : 'text') : m ? 'head' : 'text';
        if (this.state === 'text') this.buf = this.buf.replace(/^\s+/, ''); // the separator between calls is not content
      }
    }
  }

  /** Where the arguments' outermost value closes in the buffer (just past it), if it does. */
  private argumentsEnd(): number | undefined {
    for (let i = 0; i < this.buf.length; i++) {
      const c = this.buf[i];
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === '\\') this.escaped = true;
        else if (c === '"') this.inString = false;
      } else if (c === '"') this.inString = true;
      else if (c === '{' || c === '[') this.depth++;
      else if ((c === '}' || c === ']') && --this.depth === 0) return i + 1;
    }
    return undefined;
  }

  /** The end of the text: what was held back is released as it stands. */
  end(): ToolEvent[] {
    const rest = this.buf;
    this.buf = '';
    // A call cut before its name is plain text; what follows a call's arguments (its closing tag,
    // or what was cut of it) is dropped.
    const text = this.state === 'text' ? rest : this.state === 'head' ? this.s.trigger + rest : '';
    return text ? [{ kind: 'content', text }] : [];
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
export function parseToolCalls(text: string, syntax: ToolSyntax = 'hermes'): ParsedToolCalls {
  const p = new ToolCallParser(syntax);
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
