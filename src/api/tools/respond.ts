// Chat replies shaped as OpenAI shapes them: a reasoning model's thinking apart from its
// answer (`reasoning_content`, as llama.cpp's server writes it and the AI SDK and LangChain
// read it, and the same text as `reasoning`, vLLM's name for it now), and tool calls read
// from the answer only: a message's `tool_calls` with finish_reason "tool_calls", and in a
// stream, per call a first delta with id, type and name (arguments ""), then argument fragments.
import type { ChatCompletionChunk, ChatCompletionMessage } from 'openai/resources/chat/completions';
import type { FinishReason, ThinkingStart, ToolSyntax } from '../../engine/protocol.js';
import { randomId } from '../ids.js';
import { splitThinking, ThinkingSplitter } from '../reasoning/index.js';
import { parseToolCalls, ToolCallParser } from './parser.js';

type ChatFinish = FinishReason | 'tool_calls';
/** OpenAI's types carry no thinking: SGLang's and llama.cpp's field for it, and vLLM's (which deprecated the first). */
type Thinking = { reasoning_content?: string; reasoning?: string };
export type ReplyMessage = ChatCompletionMessage & Thinking;
export type ReplyDelta = ChatCompletionChunk.Choice.Delta & Thinking;

/**
 * The assistant message for a finished reply; calls (when `parse`) turn the finish into
 * "tool_calls". `thinking`: a reasoning model's reply, and where it started.
 */
export function replyMessage(
  text: string,
  finish: FinishReason,
  plan: { parse: boolean; syntax: ToolSyntax },
  thinking?: ThinkingStart,
): { message: ReplyMessage; finish_reason: ChatFinish } {
  const { reasoning, content } = thinking ? splitThinking(text, thinking) : { reasoning: null, content: text };
  const reply = answerMessage(content, finish, plan);
  if (reasoning !== null) reply.message = { ...reply.message, reasoning_content: reasoning, reasoning };
  return reply;
}

function answerMessage(text: string, finish: FinishReason, plan: { parse: boolean; syntax: ToolSyntax }): { message: ReplyMessage; finish_reason: ChatFinish } {
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

/** One streamed choice's deltas: thinking and content as they come, tool calls as they open and grow. */
export class StreamedReply {
  private readonly parser?: ToolCallParser;
  private readonly splitter?: ThinkingSplitter;

  constructor(plan: { parse: boolean; syntax: ToolSyntax }, thinking?: ThinkingStart) {
    if (plan.parse) this.parser = new ToolCallParser(plan.syntax);
    if (thinking) this.splitter = new ThinkingSplitter(thinking);
  }

  push(text: string): ReplyDelta[] {
    if (!this.splitter) return this.answer(text);
    const { reasoning, content } = this.splitter.push(text);
    return [...thought(reasoning), ...this.answer(content)];
  }

  end(): ReplyDelta[] {
    const held = this.splitter?.end() ?? { reasoning: '', content: '' };
    return [...thought(held.reasoning), ...this.answer(held.content), ...(this.parser ? this.parser.end().map(toDelta) : [])];
  }

  finish(reason: FinishReason): ChatFinish {
    return reason === 'stop' && this.parser && this.parser.callCount > 0 ? 'tool_calls' : reason;
  }

  private answer(text: string): ReplyDelta[] {
    return this.parser ? this.parser.push(text).map(toDelta) : text ? [{ content: text }] : [];
  }
}

const thought = (text: string): ReplyDelta[] => (text ? [{ reasoning_content: text, reasoning: text }] : []);

function toDelta(e: ReturnType<ToolCallParser['push']>[number]): ReplyDelta {
  if (e.kind === 'content') return { content: e.text };
  if (e.kind === 'call') return { tool_calls: [{ index: e.index, id: randomId('call_'), type: 'function', function: { name: e.name, arguments: '' } }] };
  return { tool_calls: [{ index: e.index, function: { arguments: e.text } }] };
}
