// Chat, completions and embeddings for an upstream model: the body goes on with
// the upstream's model name (and a request for stream usage), the answer comes
// back with Hearth's id. Usage is what the upstream reports; when it reports none
// (or the stream broke off first) Hearth counts: the content-bearing chunks it
// delivered (streaming servers send one a token) and about four characters a
// prompt token.
import { z } from 'zod';
import { jsonResponse } from '../api/errors.js';
import { parseBody } from '../api/schemas/common.js';
import { upstreamError } from './errors.js';
import { forward, type ForwardDeps } from './forward.js';
import type { UpstreamPool } from './pool.js';
import { relaySse } from './relay.js';

export interface TokenUsage {
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens?: number;
}

/** What a forwarded request needs: where to send it, and how to charge the caller. */
export interface UpstreamRequest {
  pool: UpstreamPool;
  deps: ForwardDeps;
  /** The caller's connection: aborting it aborts the upstream request. */
  signal?: AbortSignal;
  /** Charges what was delivered (null: nothing) and ends the request's hold on the cap;
   * `beforeReply`: the reply waits for it (a charge the store cannot take is a 503). */
  charge(usage: TokenUsage | null, beforeReply?: boolean): Promise<void>;
  /** A stream's usage so far, as it is relayed (the hold keeps it: a crash still charges it). */
  delivered?(usage: TokenUsage): void;
}

export type Body = Record<string, unknown>;

// The upstream validates the rest (it may accept more than Hearth's local engine does).
const streamFields = { model: z.string().min(1), stream: z.boolean().nullish(), stream_options: z.looseObject({}).nullish() };
export const forwardSchemas = {
  chat: z.looseObject({ ...streamFields, messages: z.array(z.unknown()).min(1) }),
  completion: z.looseObject({ ...streamFields, prompt: z.union([z.string(), z.array(z.unknown()).min(1)]) }),
  embedding: z.looseObject({ model: z.string().min(1), input: z.union([z.string(), z.array(z.unknown()).min(1)]) }),
};

export const estimateTokens = (text: string) => Math.ceil(text.length / 4);

/** The text a prompt carries (token arrays count as their length). */
function promptTokens(value: unknown): number {
  if (typeof value === 'string') return estimateTokens(value);
  if (typeof value === 'number') return 1;
  if (Array.isArray(value)) return value.reduce((n: number, v) => n + promptTokens(v), 0);
  if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    return promptTokens(o.content ?? o.text ?? '');
  }
  return 0;
}

export async function readUpstreamJson(res: Response, id: string): Promise<Body> {
  try {
    const v = (await res.json()) as unknown;
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Body;
  } catch {
    // fall through
  }
  throw upstreamError(id, 'its answer was not a JSON object');
}

/** An upstream's `usage` object, or null when it has none. */
export function usageOf(v: unknown): TokenUsage | null {
  const u = v as { prompt_tokens?: number; completion_tokens?: number; prompt_tokens_details?: { cached_tokens?: number } } | null | undefined;
  if (!u || typeof u.prompt_tokens !== 'number') return null;
  return { prompt_tokens: u.prompt_tokens, completion_tokens: u.completion_tokens ?? 0, cached_tokens: u.prompt_tokens_details?.cached_tokens ?? 0 };
}

/** Output text a choice carries, chat (message/delta) or completion (text). */
function choiceText(choice: unknown): string {
  const c = choice as { text?: unknown; message?: { content?: unknown; tool_calls?: unknown }; delta?: { content?: unknown; tool_calls?: unknown } };
  const m = c.message ?? c.delta;
  if (typeof c.text === 'string') return c.text;
  if (m && typeof m.content === 'string') return m.content;
  return m?.tool_calls ? JSON.stringify(m.tool_calls) : '';
}

/** POST /v1/chat/completions or /v1/completions for an upstream model. */
export async function forwardGeneration(kind: 'chat' | 'completion', raw: Body, req: UpstreamRequest): Promise<Response> {
  const body = parseBody(forwardSchemas[kind], raw);
  const { pool } = req;
  const prompt = promptTokens(kind === 'chat' ? body.messages : body.prompt);
  const path = kind === 'chat' ? '/chat/completions' : '/completions';
  const out: Body = { ...body, model: pool.spec.model };

  if (body.stream !== true) {
    const json = await readUpstreamJson(await forward(pool, path, out, req.deps, req.signal), pool.id);
    json.model = pool.id;
    const choices = Array.isArray(json.choices) ? json.choices : [];
    const usage = usageOf(json.usage) ?? { prompt_tokens: prompt, completion_tokens: choices.reduce((n: number, c) => n + estimateTokens(choiceText(c)), 0) };
    await req.charge(usage, true);
    return jsonResponse(json);
  }

  const wantsUsage = body.stream_options?.include_usage === true;
  out.stream_options = { ...(body.stream_options ?? {}), include_usage: true };
  const res = await forward(pool, path, out, req.deps, req.signal);
  let usage: TokenUsage | null = null;
  let delivered = 0;
  return relaySse(res.body!, {
    id: pool.id,
    map(ev) {
      if ('model' in ev) ev.model = pool.id;
      const u = usageOf(ev.usage);
      if (u) usage = u;
      const choices = Array.isArray(ev.choices) ? ev.choices : [];
      if (!wantsUsage) {
        if (u && choices.length === 0) return undefined; // the usage chunk the caller did not ask for
        delete ev.usage;
      }
      delivered += choices.filter((c) => choiceText(c) !== '').length;
      req.delivered?.(usage ?? { prompt_tokens: prompt, completion_tokens: delivered });
      return ev;
    },
    onEnd(end) {
      const u = usage ?? { prompt_tokens: prompt, completion_tokens: delivered };
      req.charge(end.kind !== 'cancelled' || u.completion_tokens > 0 ? u : null).catch(() => undefined);
    },
  });
}

/** POST /v1/embeddings for an upstream model. */
export async function forwardEmbeddings(raw: Body, req: UpstreamRequest): Promise<Response> {
  const body = parseBody(forwardSchemas.embedding, raw);
  const { pool } = req;
  const res = await forward(pool, '/embeddings', { ...body, model: pool.spec.model }, req.deps, req.signal);
  const json = await readUpstreamJson(res, pool.id);
  json.model = pool.id;
  await req.charge(usageOf(json.usage) ?? { prompt_tokens: promptTokens(body.input), completion_tokens: 0 }, true);
  return jsonResponse(json);
}
