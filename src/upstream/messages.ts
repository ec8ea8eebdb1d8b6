// POST /v1/messages for an upstream model: translated onto the upstream's /chat/completions
// (what every OpenAI-speaking server has) as a local model's request is translated onto the
// engine (../api/schemas/messages.ts), and the answer written back as the same message and named
// events (../api/messages/), under Hearth's id and model. Charged from the upstream's usage.
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { jsonResponse } from '../api/errors.js';
import type { Usage } from '../api/generation.js';
import { anthropicEnvelope } from '../api/messages/errors.js';
import { MessageEvents, type MessageHead } from '../api/messages/events.js';
import { contentBlocks, messageUsage, stopReason, type MessageBody } from '../api/messages/reply.js';
import type { ReplyMessage } from '../api/tools/respond.js';
import { forward } from './forward.js';
import { estimateTokens, readUpstreamJson, usageOf, type Body, type TokenUsage, type UpstreamRequest } from './openai.js';
import { eventQueue, relaySse } from './relay.js';

/** One Messages request for an upstream model, as the route prepared it. */
export interface MessagesTurn {
  head: MessageHead;
  /** The chat completions body the request stands for. */
  chat: Body;
  stream: boolean;
  /** The request's stop sequences. */
  sequences: string[];
  omitThinking: boolean;
}

type Finish = 'stop' | 'length' | 'tool_calls';
type UpstreamMessage = { content?: string | null; reasoning_content?: string | null; reasoning?: string | null; tool_calls?: ReplyMessage['tool_calls'] };

const toUsage = (u: TokenUsage): Usage => ({ prompt_tokens: u.prompt_tokens, completion_tokens: u.completion_tokens, cached_tokens: u.cached_tokens ?? 0 });
const finishOf = (reason: unknown): Finish => (reason === 'length' ? 'length' : reason === 'tool_calls' ? 'tool_calls' : 'stop');

/** The body the upstream is sent: its own model name, max_tokens (the name every OpenAI-speaking server takes). */
function chatBody(t: MessagesTurn, model: string): Body {
  const { max_completion_tokens, ...chat } = t.chat;
  return { ...chat, model, max_tokens: max_completion_tokens, ...(t.sequences.length ? { stop: t.sequences } : {}) };
}

const promptEstimate = (t: MessagesTurn) => estimateTokens(JSON.stringify(t.chat.messages));

export async function forwardMessages(t: MessagesTurn, req: UpstreamRequest): Promise<Response> {
  const { pool } = req;
  const body = chatBody(t, pool.spec.model);
  if (!t.stream) {
    const json = await readUpstreamJson(await forward(pool, '/chat/completions', body, req.deps, req.signal), pool.id);
    const choice = (Array.isArray(json.choices) ? json.choices[0] : undefined) as { message?: UpstreamMessage; finish_reason?: string; stop_reason?: unknown } | undefined;
    const m = choice?.message ?? {};
    const message: ReplyMessage = {
      role: 'assistant',
      content: m.content ?? null,
      refusal: null,
      ...(m.tool_calls?.length ? { tool_calls: m.tool_calls } : {}),
      ...((m.reasoning_content ?? m.reasoning) != null ? { reasoning_content: (m.reasoning_content ?? m.reasoning)! } : {}),
    };
    const usage = usageOf(json.usage) ?? { prompt_tokens: promptEstimate(t), completion_tokens: estimateTokens(m.content ?? '') };
    // vLLM names the stop string that ended a choice (`stop_reason`); others do not.
    const matched = typeof choice?.stop_reason === 'string' ? choice.stop_reason : null;
    const reply: MessageBody = {
      id: t.head.id,
      type: 'message',
      role: 'assistant',
      model: t.head.model,
      content: contentBlocks(message, t.omitThinking),
      ...stopReason(finishOf(choice?.finish_reason), matched, t.sequences),
      usage: messageUsage(toUsage(usage)),
    };
    await req.charge(usage, true);
    return jsonResponse(reply);
  }

  const res = await forward(pool, '/chat/completions', { ...body, stream: true, stream_options: { include_usage: true } }, req.deps, req.signal);
  const { push, take } = eventQueue();
  const events = new MessageEvents(t.head, push, t.omitThinking);
  let usage: TokenUsage | null = null;
  let delivered = 0;
  let finish: Finish = 'stop';
  let matched: string | null = null;
  const soFar = () => usage ?? { prompt_tokens: promptEstimate(t), completion_tokens: delivered };
  // The prompt's size is known only from the upstream's last chunk: message_delta carries it.
  events.start(messageUsage({ prompt_tokens: 0, completion_tokens: 0, cached_tokens: 0 }));
  return relaySse(res.body!, {
    id: pool.id,
    named: true,
    map(ev) {
      usage = usageOf(ev.usage) ?? usage;
      for (const c of (Array.isArray(ev.choices) ? ev.choices : []) as (ChatCompletionChunk.Choice & { stop_reason?: unknown })[]) {
        if (c.index !== 0) continue;
        if (c.delta?.content || c.delta?.tool_calls?.length) delivered++;
        if (c.delta) events.push(c.delta);
        if (c.finish_reason) finish = finishOf(c.finish_reason);
        if (typeof c.stop_reason === 'string') matched = c.stop_reason;
      }
      req.delivered?.(soFar());
      return take();
    },
    finish() {
      events.finish(stopReason(finish, matched, t.sequences), messageUsage(toUsage(soFar())));
      return take();
    },
    failure: (e) => [...take(), anthropicEnvelope(e.status, { error: { message: e.message, type: e.type, param: null, code: e.code } })],
    onEnd(end) {
      const u = soFar();
      req.charge(end.kind !== 'cancelled' || u.completion_tokens > 0 ? u : null).catch(() => undefined);
    },
  });
}
