// POST /generate (SGLang's native route) for an upstream model, mapped onto the
// upstream's /v1/completions: sampling_params become completion fields, the
// choices come back as `text[]` and `meta_info` as Hearth's own /generate writes
// them (cumulative text per event when streaming). Logprobs are not mapped.
import { invalidRequest, jsonResponse } from '../api/errors.js';
import { parseBody } from '../api/schemas/common.js';
import { generateRequestSchema, toGenerateCall, type GenerateCall } from '../api/schemas/generate.js';
import { randomId } from '../api/ids.js';
import { forward } from './forward.js';
import { estimateTokens, readUpstreamJson, usageOf, type Body, type TokenUsage, type UpstreamRequest } from './openai.js';
import { relaySse } from './relay.js';

interface Choice {
  index: number;
  text: string;
  finish_reason: string | null;
}

function completionBody(call: GenerateCall, raw: Body, model: string): Body {
  const sp = (raw.sampling_params ?? {}) as Record<string, unknown>;
  const s = call.sampling;
  const prompts = call.prompts.map((p) => ('text' in p ? p.text : (p as { tokens: number[] }).tokens));
  const out: Body = {
    model,
    prompt: prompts.length === 1 ? prompts[0] : prompts,
    max_tokens: s.max_tokens,
    temperature: s.temperature,
    top_p: s.top_p,
    n: call.n,
    ...(s.stop.length ? { stop: s.stop } : {}),
    ...(s.seed !== undefined ? { seed: s.seed } : {}),
    ...(s.presence_penalty ? { presence_penalty: s.presence_penalty } : {}),
    ...(s.frequency_penalty ? { frequency_penalty: s.frequency_penalty } : {}),
  };
  // Fields beyond OpenAI's, sent only when asked for (vLLM and SGLang take them).
  for (const k of ['top_k', 'min_p', 'stop_token_ids', 'ignore_eos'] as const) if (sp[k] != null) out[k] = sp[k];
  return out;
}

function finishInfo(reason: string | null, completionTokens: number) {
  return reason === 'length' ? { type: 'length', length: completionTokens } : { type: 'stop', matched: null };
}

function finalBody(id: string, model: string, choices: Choice[], usage: TokenUsage, startedAt: number) {
  const latency = (Date.now() - startedAt) / 1000;
  const sorted = [...choices].sort((a, b) => a.index - b.index);
  const meta = {
    id,
    model,
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    cached_tokens: usage.cached_tokens ?? 0,
    finish_reason: finishInfo(sorted[0]?.finish_reason ?? null, usage.completion_tokens),
    e2e_latency: latency,
  };
  return {
    text: sorted.map((c) => c.text),
    meta_info: sorted.length === 1 ? meta : { ...meta, items: sorted.map((c) => ({ finish_reason: finishInfo(c.finish_reason, estimateTokens(c.text)) })) },
  };
}

export async function forwardGenerate(raw: Body, req: UpstreamRequest): Promise<Response> {
  const call = toGenerateCall(parseBody(generateRequestSchema, raw));
  if (call.returnLogprob) throw invalidRequest('return_logprob is not supported for models served by an upstream.', 'return_logprob');
  const { pool } = req;
  const startedAt = Date.now();
  const id = randomId('', 32).toLowerCase();
  const body = completionBody(call, raw, pool.spec.model);
  const promptEstimate = call.prompts.reduce((n, p) => n + ('text' in p ? estimateTokens(p.text) : (p as { tokens: number[] }).tokens.length), 0);

  if (!call.stream) {
    const json = await readUpstreamJson(await forward(pool, '/completions', body, req.deps, req.signal), pool.id);
    const choices = (Array.isArray(json.choices) ? json.choices : []) as Choice[];
    const usage = usageOf(json.usage) ?? {
      prompt_tokens: promptEstimate,
      completion_tokens: choices.reduce((n, c) => n + estimateTokens(c.text ?? ''), 0),
      cached_tokens: 0,
    };
    await req.charge(usage, true);
    return jsonResponse(finalBody(id, pool.id, choices, usage, startedAt));
  }

  const res = await forward(pool, '/completions', { ...body, stream: true, stream_options: { include_usage: true } }, req.deps, req.signal);
  const count = call.prompts.length * call.n;
  const choices: Choice[] = Array.from({ length: count }, (_, index) => ({ index, text: '', finish_reason: null }));
  let usage: TokenUsage | null = null;
  let delivered = 0;
  const fallback = () => usage ?? { prompt_tokens: promptEstimate, completion_tokens: delivered, cached_tokens: 0 };
  return relaySse(res.body!, {
    id: pool.id,
    map(ev) {
      usage = usageOf(ev.usage) ?? usage;
      const got = (Array.isArray(ev.choices) ? ev.choices : []) as Choice[];
      if (!got.length) return undefined;
      for (const c of got) {
        const slot = choices[c.index] ?? choices[0]!;
        if (c.text) {
          slot.text += c.text;
          delivered++;
        }
        if (c.finish_reason) slot.finish_reason = c.finish_reason;
      }
      req.delivered?.(fallback());
      return { text: choices.map((c) => c.text), meta_info: { id, model: pool.id, completion_tokens: delivered, finish_reason: null } };
    },
    finish: () => [finalBody(id, pool.id, choices, fallback(), startedAt)],
    onEnd(end) {
      const u = fallback();
      req.charge(end.kind !== 'cancelled' || u.completion_tokens > 0 ? u : null).catch(() => undefined);
    },
  });
}
