// A Responses stream's events, in OpenAI's order: response.created and .in_progress; per
// output item, output_item.added, then for a reasoning item content_part.added,
// reasoning_text.delta … .done and content_part.done, for a message content_part.added,
// output_text.delta … .done and content_part.done, for a function call function_call_arguments.delta … .done;
// output_item.done; then response.completed (or .incomplete, or .failed). Every event
// carries its `type` and an increasing `sequence_number`.
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { ResponseOutputItem } from 'openai/resources/responses/responses';
import type { FinishReason } from '../../engine/protocol.js';
import type { Usage } from '../generation.js';
import { randomId } from '../ids.js';
import type { SseSend } from '../sse.js';
import { functionCallItem, messageItem, reasoningItem, responseObject, type ResponseBody, type ResponseHead } from './object.js';

type Delta = ChatCompletionChunk.Choice.Delta;

type Open =
  | { kind: 'reasoning'; index: number; id: string; text: string }
  | { kind: 'message'; index: number; id: string; text: string }
  | { kind: 'call'; index: number; id: string; callId: string; name: string; args: string };

export class ResponseEvents {
  private seq = 0;
  private readonly done: ResponseOutputItem[] = [];
  private open?: Open;

  constructor(
    private readonly head: ResponseHead,
    private readonly send: SseSend,
  ) {}

  private emit(type: string, fields: Record<string, unknown>): void {
    this.send({ type, ...fields, sequence_number: this.seq++ });
  }

  start(): void {
    this.emit('response.created', { response: responseObject(this.head, 'in_progress', []) });
    this.emit('response.in_progress', { response: responseObject(this.head, 'in_progress', []) });
  }

  /** One chat delta of the reply: text joins the open message, a call opens an item of its own. */
  push(d: Delta & { reasoning_content?: string }): void {
    if (d.reasoning_content) {
      if (this.open?.kind !== 'reasoning') this.openReasoning();
      const r = this.open as Extract<Open, { kind: 'reasoning' }>;
      r.text += d.reasoning_content;
      this.emit('response.reasoning_text.delta', { item_id: r.id, output_index: r.index, content_index: 0, delta: d.reasoning_content });
    }
    if (d.content) {
      if (this.open?.kind !== 'message') this.openMessage();
      const m = this.open as Extract<Open, { kind: 'message' }>;
      m.text += d.content;
      this.emit('response.output_text.delta', { item_id: m.id, output_index: m.index, content_index: 0, delta: d.content, logprobs: [] });
    }
    for (const t of d.tool_calls ?? []) {
      if (t.id) {
        this.close('completed');
        const index = this.done.length;
        this.open = { kind: 'call', index, id: randomId('fc_'), callId: t.id, name: t.function?.name ?? '', args: '' };
        this.emit('response.output_item.added', { output_index: index, item: functionCallItem(this.open.id, t.id, this.open.name, '', 'in_progress') });
      }
      const args = t.function?.arguments;
      if (args && this.open?.kind === 'call') {
        this.open.args += args;
        this.emit('response.function_call_arguments.delta', { item_id: this.open.id, output_index: this.open.index, delta: args });
      }
    }
  }

  /** Closes what is open and returns the final response, for complete() to send (once it is stored). */
  finish(reason: FinishReason, usage: Usage, reasoningTokens?: number): ResponseBody {
    const status = reason === 'length' ? 'incomplete' : 'completed';
    // An empty reply is still a message (and a reply that only thought has an empty one after it).
    if (!this.done.some((i) => i.type !== 'reasoning') && this.open?.kind !== 'message' && this.open?.kind !== 'call') this.openMessage();
    this.close(status);
    return responseObject(this.head, status, this.done, { usage, reasoningTokens });
  }

  /** The last event: response.completed (or .incomplete) with the final response. */
  complete(final: ResponseBody): void {
    this.emit(`response.${final.status}`, { response: final });
  }

  /** The last event of a stream that failed after it began. */
  failed(message: string) {
    this.close('incomplete');
    return {
      type: 'response.failed',
      response: responseObject(this.head, 'failed', this.done, { error: { code: 'server_error', message } }),
      sequence_number: this.seq++,
    };
  }

  private openReasoning(): void {
    this.close('completed');
    const index = this.done.length;
    this.open = { kind: 'reasoning', index, id: randomId('rs_'), text: '' };
    this.emit('response.output_item.added', { output_index: index, item: { ...reasoningItem(this.open.id, '', 'in_progress'), content: [] } });
    this.emit('response.content_part.added', { item_id: this.open.id, output_index: index, content_index: 0, part: { type: 'reasoning_text', text: '' } });
  }

  private openMessage(): void {
    this.close('completed');
    const index = this.done.length;
    this.open = { kind: 'message', index, id: randomId('msg_'), text: '' };
    this.emit('response.output_item.added', { output_index: index, item: { ...messageItem(this.open.id, '', 'in_progress'), content: [] } });
    this.emit('response.content_part.added', { item_id: this.open.id, output_index: index, content_index: 0, part: { type: 'output_text', text: '', annotations: [], logprobs: [] } });
  }

  private close(status: 'completed' | 'incomplete'): void {
    const o = this.open;
    if (!o) return;
    this.open = undefined;
    if (o.kind === 'reasoning') {
      const item = reasoningItem(o.id, o.text, status);
      this.emit('response.reasoning_text.done', { item_id: o.id, output_index: o.index, content_index: 0, text: o.text });
      this.emit('response.content_part.done', { item_id: o.id, output_index: o.index, content_index: 0, part: item.content![0] });
      this.emit('response.output_item.done', { output_index: o.index, item });
      this.done.push(item);
    } else if (o.kind === 'message') {
      const item = messageItem(o.id, o.text, status);
      this.emit('response.output_text.done', { item_id: o.id, output_index: o.index, content_index: 0, text: o.text, logprobs: [] });
      this.emit('response.content_part.done', { item_id: o.id, output_index: o.index, content_index: 0, part: item.content[0] });
      this.emit('response.output_item.done', { output_index: o.index, item });
      this.done.push(item);
    } else {
      const item = functionCallItem(o.id, o.callId, o.name, o.args, status);
      this.emit('response.function_call_arguments.done', { item_id: o.id, output_index: o.index, name: o.name, arguments: o.args });
      this.emit('response.output_item.done', { output_index: o.index, item });
      this.done.push(item);
    }
  }
}
