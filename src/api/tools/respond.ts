// Tool calls in chat responses, shaped as OpenAI shapes them: a message's `tool_calls`
// with finish_reason "tool_calls", and in a stream, per call a first delta with id, type
// and name (arguments ""), then argument fragments.
import type { ChatCompletionChunk, ChatCompletionMessage } from 'openai/resources/chat/completions';
import type { FinishReason, ToolSyntax } from '../../engine/protocol.js';
import { randomId } from '../ids.js';
import { parseToolCalls, ToolCallParser } from './parser.js';

type ChatFinish = FinishReason | 'tool_calls';
type Delta = ChatCompletionChunk.Choice.Delta;

/** The assistant message for a finished reply; calls (when `parse`) turn the finish into "tool_calls". */
export function replyMessage(text: string, finish: FinishReason, plan: { parse: boolean; syntax: ToolSyntax }): { message: ChatCompletionMessage; finish_reason: ChatFinish } {
  const plain = { message: { role: 'assistant' as const, content: text, refusal: null }, finish_reason: finish };
  if (!plan.parse) return plain;
  const { content, calls } = parseToolCalls(text, plan.syntax);
  if (!calls.length) return plain;
  return {
    message: {
      role: 'assistant',
      content,
      refusal: null,
      tool_calls: calls.map((c) => ({ id: randomId('call_'), type: 'function', function: c })),
    },
    finish_reason: finish === 'stop' ? 'tool_calls' : finish,
  };
}

/** One streamed choice's deltas: content as it comes, tool calls as they open and grow. */
export class StreamedReply {
  private readonly parser?: ToolCallParser;

  constructor(plan: { parse: boolean; syntax: ToolSyntax }) {
    if (plan.parse) this.parser = new ToolCallParser(plan.syntax);
  }

  push(text: string): Delta[] {
    return this.parser ? this.parser.push(text).map(toDelta) : text ? [{ content: text }] : [];
  }

  end(): Delta[] {
    return this.parser ? this.parser.end().map(toDelta) : [];
  }

  finish(reason: FinishReason): ChatFinish {
    return reason === 'stop' && this.parser && this.parser.callCount > 0 ? 'tool_calls' : reason;
  }
}

function toDelta(e: ReturnType<ToolCallParser['push']>[number]): Delta {
  if (e.kind === 'content') return { content: e.text };
  if (e.kind === 'call') return { tool_calls: [{ index: e.index, id: randomId('call_'), type: 'function', function: { name: e.name, arguments: '' } }] };
  return { tool_calls: [{ index: e.index, function: { arguments: e.text } }] };
}
