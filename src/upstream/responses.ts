// POST /v1/responses for an upstream model. Sent to the upstream's own /responses when it
// has one (vLLM, another Hearth), otherwise translated onto its /chat/completions and the
// answer written as Responses shapes (the same object and named events a local model's
// request gets). Either way Hearth keeps the conversation: the upstream is sent the whole
// of it with store: false (a pool's URLs share no stored responses), and the response
// comes back under Hearth's id, stored in Hearth's store before its last event.
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { ApiError, jsonResponse } from '../api/errors.js';
import type { Usage } from '../api/generation.js';
import { ResponseEvents } from '../api/responses/events.js';
import { outputItems, responseObject, type ResponseBody, type ResponseHead } from '../api/responses/object.js';
import { toChatBody, type InputItem } from '../api/schemas/responses.js';
import { forward } from './forward.js';
import { estimateTokens, readUpstreamJson, usageOf, type Body, type TokenUsage, type UpstreamRequest } from './openai.js';
import type { UpstreamPool } from './pool.js';
import { eventQueue, relaySse } from './relay.js';

/** One Responses request for an upstream model, as the route prepared it. */
export interface ResponsesTurn {
  /** Hearth's id and time for the response, the parsed request and its chat call (for the echo). */
  head: ResponseHead;
  /** The body as the caller sent it: fields Hearth does not read still reach the upstream. */
  raw: Body;
  /** The whole conversation (a continued one's earlier items first). */
  input: InputItem[];
  /** Stores the final response (unless the request said store: false). */
  keep(final: ResponseBody): Promise<void>;
}

const text = (content: string | { text?: unknown }[]) => (typeof content === 'string' ? content : content.map((p) => String(p.text)).join(''));

/** The conversation as plain input items, ids and statuses left out: any Responses server takes these. */
function plainInput(input: InputItem[]): Body[] {
  return input.map((item) => {
    if (item.type === 'function_call') return { type: 'function_call', call_id: item.call_id, name: item.name, arguments: item.arguments };
    if (item.type === 'function_call_output') return { type: 'function_call_output', call_id: item.call_id, output: text(item.output) };
    return { type: 'message', role: item.role, content: text(item.content) };
  });
}

const toUsage = (u: TokenUsage): Usage => ({ prompt_tokens: u.prompt_tokens, completion_tokens: u.completion_tokens, cached_tokens: u.cached_tokens ?? 0 });

/** A Responses `usage`, or null when it has none. */
function responsesUsage(v: unknown): TokenUsage | null {
  const u = v as { input_tokens?: number; output_tokens?: number; input_tokens_details?: { cached_tokens?: number } } | null | undefined;
  if (!u || typeof u.input_tokens !== 'number') return null;
  return { prompt_tokens: u.input_tokens, completion_tokens: u.output_tokens ?? 0, cached_tokens: u.input_tokens_details?.cached_tokens ?? 0 };
}

/** Prompt tokens when the upstream reports none: about four characters a token. */
const promptEstimate = (t: ResponsesTurn) => estimateTokens(JSON.stringify(plainInput(t.input)) + (t.head.body.instructions ?? ''));

/** The upstream's response object under Hearth's id and model, echoing what the caller asked. */
function adopt(r: Record<string, unknown>, t: ResponsesTurn): ResponseBody {
  return { ...r, id: t.head.id, model: t.head.model, previous_response_id: t.head.body.previous_response_id ?? null, store: t.head.body.store ?? true } as ResponseBody;
}

/** An upstream answer that says it has no /responses route (not one about the model or the body). */
function lacksRoute(err: unknown, pool: UpstreamPool): boolean {
  return err instanceof ApiError && (err.status === 404 || err.status === 405) && err.code !== 'model_not_found' && !err.message.includes(pool.id);
}

export async function forwardResponses(t: ResponsesTurn, req: UpstreamRequest): Promise<Response> {
  const { pool } = req;
  if (pool.responsesApi !== false) {
    const { previous_response_id: _p, store: _s, ...rest } = t.raw;
    const body = { ...rest, model: pool.spec.model, input: plainInput(t.input), store: false };
    let res: Response;
    try {
      res = await forward(pool, '/responses', body, req.deps, req.signal);
    } catch (err) {
      if (!lacksRoute(err, pool)) throw err;
      pool.responsesApi = false;
      return viaChat(t, req);
    }
    pool.responsesApi = true;
    return t.head.body.stream ? relayResponses(res, t, req) : answerResponses(res, t, req);
  }
  return viaChat(t, req);
}

async function answerResponses(res: Response, t: ResponsesTurn, req: UpstreamRequest): Promise<Response> {
  const final = adopt(await readUpstreamJson(res, req.pool.id), t);
  const usage = responsesUsage(final.usage) ?? { prompt_tokens: promptEstimate(t), completion_tokens: estimateTokens(final.output_text ?? '') };
  await t.keep(final);
  await req.charge(usage, true);
  return jsonResponse(final);
}

function relayResponses(res: Response, t: ResponsesTurn, req: UpstreamRequest): Response {
  let usage: TokenUsage | null = null;
  let delivered = 0;
  let seq = 0;
  const soFar = () => usage ?? { prompt_tokens: promptEstimate(t), completion_tokens: delivered };
  return relaySse(res.body!, {
    id: req.pool.id,
    named: true,
    async map(ev) {
      if (typeof ev.sequence_number === 'number') seq = ev.sequence_number;
      if (ev.type === 'response.output_text.delta' || ev.type === 'response.function_call_arguments.delta') delivered++;
      if (ev.response && typeof ev.response === 'object') {
        const r = adopt(ev.response as Record<string, unknown>, t);
        ev.response = r;
        usage = responsesUsage(r.usage) ?? usage;
        if (ev.type === 'response.completed' || ev.type === 'response.incomplete') await t.keep(r);
      }
      req.delivered?.(soFar());
      return ev;
    },
    failure: (e) => ({
      type: 'response.failed',
      response: responseObject(t.head, 'failed', [], { error: { code: 'server_error', message: e.message } }),
      sequence_number: seq + 1,
    }),
    onEnd(end) {
      const u = soFar();
      req.charge(end.kind !== 'cancelled' || u.completion_tokens > 0 ? u : null).catch(() => undefined);
    },
  });
}

/** The chat completions body for the conversation: Responses fields as their chat names. */
function chatBody(t: ResponsesTurn, model: string): Body {
  const { max_completion_tokens, ...chat } = toChatBody({ ...t.head.body, input: t.input });
  // max_tokens: the name every OpenAI-speaking server takes.
  return { ...chat, model, ...(max_completion_tokens != null ? { max_tokens: max_completion_tokens } : {}) };
}

type ChatMessage = { content?: string | null; tool_calls?: { id: string; type?: string; function: { name: string; arguments: string } }[] };

async function viaChat(t: ResponsesTurn, req: UpstreamRequest): Promise<Response> {
  const { pool } = req;
  const body = chatBody(t, pool.spec.model);
  if (!t.head.body.stream) {
    const json = await readUpstreamJson(await forward(pool, '/chat/completions', body, req.deps, req.signal), pool.id);
    const choice = (Array.isArray(json.choices) ? json.choices[0] : undefined) as { message?: ChatMessage; finish_reason?: string } | undefined;
    const message = choice?.message ?? {};
    const finish = choice?.finish_reason === 'length' ? 'length' : 'stop';
    const calls = (message.tool_calls ?? []).filter((c) => (c.type ?? 'function') === 'function');
    const usage = usageOf(json.usage) ?? { prompt_tokens: promptEstimate(t), completion_tokens: estimateTokens(message.content ?? '') };
    const final = responseObject(t.head, finish === 'length' ? 'incomplete' : 'completed', outputItems(message.content ?? null, calls, finish), { usage: toUsage(usage) });
    await t.keep(final);
    await req.charge(usage, true);
    return jsonResponse(final);
  }

  const res = await forward(pool, '/chat/completions', { ...body, stream: true, stream_options: { include_usage: true } }, req.deps, req.signal);
  const { push, take } = eventQueue();
  const events = new ResponseEvents(t.head, push);
  let usage: TokenUsage | null = null;
  let delivered = 0;
  let finish: 'stop' | 'length' = 'stop';
  const soFar = () => usage ?? { prompt_tokens: promptEstimate(t), completion_tokens: delivered };
  events.start();
  return relaySse(res.body!, {
    id: pool.id,
    named: true,
    map(ev) {
      usage = usageOf(ev.usage) ?? usage;
      for (const c of (Array.isArray(ev.choices) ? ev.choices : []) as ChatCompletionChunk.Choice[]) {
        if (c.index !== 0) continue;
        if (c.delta?.content || c.delta?.tool_calls?.length) delivered++;
        if (c.delta) events.push(c.delta);
        if (c.finish_reason) finish = c.finish_reason === 'length' ? 'length' : 'stop';
      }
      req.delivered?.(soFar());
      return take();
    },
    async finish() {
      const final = events.finish(finish, toUsage(soFar()));
      await t.keep(final);
      events.complete(final);
      return take();
    },
    failure: (e) => [...take(), events.failed(e.message)],
    onEnd(end) {
      const u = soFar();
      req.charge(end.kind !== 'cancelled' || u.completion_tokens > 0 ? u : null).catch(() => undefined);
    },
  });
}
