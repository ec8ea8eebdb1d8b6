// A streamed Messages reply as Anthropic's stream sends it: message_start, then per content
// block content_block_start, its deltas (thinking_delta, then signature_delta; text_delta;
// input_json_delta) and content_block_stop, then message_delta (stop_reason, usage) and
// message_stop; a ping after the start. The reply's deltas (../tools/respond.ts: thinking,
// answer, tool calls as they open and grow) decide where one block ends and the next begins.
import type { ReplyDelta } from '../tools/respond.js';
import { randomId } from '../ids.js';
import { type MessageBody, type MessageUsage, type StopReason, thinkingSignature } from './reply.js';

export type MessageHead = Pick<MessageBody, 'id' | 'model'>;
type Send = (event: { type: string } & Record<string, unknown>) => void;
type Open = { kind: 'thinking'; text: string } | { kind: 'text' } | { kind: 'tool_use' };

export class MessageEvents {
  private index = -1;
  private open?: Open;
  /** Whitespace not yet sent: a text block's trailing space before a tool call is dropped, as
   * the finished reply trims it (parseToolCalls). */
  private space = '';
  private answered = false;
  /** The tool call whose block is open (its index in the reply's calls). */
  private call = -1;

  constructor(
    private readonly head: MessageHead,
    private readonly send: Send,
    private readonly omitThinking: boolean,
  ) {}

  start(usage: MessageUsage): void {
    const message = { id: this.head.id, type: 'message', role: 'assistant', model: this.head.model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 0 } };
    this.send({ type: 'message_start', message });
    this.send({ type: 'ping' });
  }

  /** A reply's delta: Hearth's own, or an upstream's chat chunk delta (its thinking under vLLM's name too). */
  push(d: ReplyDelta): void {
    const thought = d.reasoning_content ?? d.reasoning;
    if (thought) this.thinking(thought);
    if (d.content) this.text(d.content);
    for (const t of d.tool_calls ?? []) {
      if (t.index !== this.call) {
        this.call = t.index;
        this.tool(t.function?.name ?? '');
      }
      if (t.function?.arguments) this.delta({ type: 'input_json_delta', partial_json: t.function.arguments });
    }
  }

  finish(stop: { stop_reason: StopReason; stop_sequence: string | null }, usage: MessageUsage): void {
    if (this.space && this.open?.kind !== 'tool_use') this.text('', true);
    if (!this.answered) this.begin({ kind: 'text' }, { type: 'text', text: '' });
    this.close();
    this.send({ type: 'message_delta', delta: stop, usage });
    this.send({ type: 'message_stop' });
  }

  private thinking(text: string): void {
    if (this.open?.kind !== 'thinking') this.begin({ kind: 'thinking', text: '' }, { type: 'thinking', thinking: '', signature: '' });
    (this.open as { text: string }).text += text;
    if (!this.omitThinking) this.delta({ type: 'thinking_delta', thinking: text });
  }

  private text(text: string, flush = false): void {
    if (!flush && !/\S/.test(text)) {
      this.space += text;
      return;
    }
    if (this.open?.kind !== 'text') this.begin({ kind: 'text' }, { type: 'text', text: '' });
    this.delta({ type: 'text_delta', text: this.space + text });
    this.space = '';
  }

  private tool(name: string): void {
    this.space = '';
    this.begin({ kind: 'tool_use' }, { type: 'tool_use', id: randomId('toolu_'), name, input: {} });
  }

  private begin(open: Open, block: Record<string, unknown>): void {
    this.close();
    this.open = open;
    if (open.kind !== 'thinking') this.answered = true;
    this.send({ type: 'content_block_start', index: ++this.index, content_block: block });
  }

  private delta(delta: Record<string, unknown>): void {
    this.send({ type: 'content_block_delta', index: this.index, delta });
  }

  private close(): void {
    if (!this.open) return;
    if (this.open.kind === 'thinking') this.delta({ type: 'signature_delta', signature: thinkingSignature(this.open.text) });
    this.send({ type: 'content_block_stop', index: this.index });
    this.open = undefined;
  }
}
