// POST /generate, SGLang's native route. `text` is always an array here (one
// entry per prompt × n, prompt-major). With one output meta_info describes it;
// with several, meta_info holds the totals (prompt tokens once per prompt) and
// meta_info.items[i] describes text[i].
import type { GenerateResult } from '../../engine/protocol.js';
import { type Ctx, type RouteDeps, defaultTextModel, readJson, resolveModel } from '../context.js';
import { jsonResponse } from '../errors.js';
import { checkGenerations } from '../limits.js';
import { GenerationSet } from '../generation.js';
import { reserveGeneration } from '../charge.js';
import { randomId } from '../ids.js';
import { sglangLogprobs, sglangTopLogprobs } from '../logprobs.js';
import { parseBody } from '../schemas/common.js';
import { keepAliveOf } from '../keep-alive.js';
import { generateRequestSchema, toGenerateCall, type GenerateCall } from '../schemas/generate.js';
import { sseResponse } from '../sse.js';
import { respondWith, startStream, streamThenSettle } from './shared.js';

type FinishInfo = { type: 'stop'; matched: string | number | null } | { type: 'length'; length: number };

function finishInfo(r: GenerateResult): FinishInfo {
  return r.finish_reason === 'length' ? { type: 'length', length: r.completion_tokens } : { type: 'stop', matched: r.matched_stop };
}

function itemMeta(r: GenerateResult, call: GenerateCall, latency: number): Record<string, unknown> {
  const m: Record<string, unknown> = {
    prompt_tokens: r.prompt_tokens,
    completion_tokens: r.completion_tokens,
    cached_tokens: r.cached_tokens,
    finish_reason: finishInfo(r),
    e2e_latency: latency,
    // Output tokens that came from accepted drafts (speculative decoding), as SGLang reports them.
    spec_accepted_tokens: r.spec_accepted_tokens ?? 0,
  };
  // The raw text is left whole, as vLLM's raw routes do; a reasoning model says how much of it was thinking.
  if (r.reasoning_tokens !== undefined) m.reasoning_tokens = r.reasoning_tokens;
  if (call.returnLogprob) {
    m.output_token_logprobs = sglangLogprobs(r.logprobs);
    if (call.topLogprobsNum > 0) m.output_top_logprobs = sglangTopLogprobs(r.logprobs);
  }
  return m;
}

function finalBody(set: GenerationSet, call: GenerateCall, id: string, results: GenerateResult[]) {
  const latency = (Date.now() - set.startedAt) / 1000;
  const text = results.map((r) => r.text);
  if (results.length === 1) return { text, meta_info: { id, model: set.model, ...itemMeta(results[0]!, call, latency) } };
  const u = set.usage();
  return {
    text,
    meta_info: {
      id,
      model: set.model,
      prompt_tokens: u.prompt_tokens,
      completion_tokens: u.completion_tokens,
      cached_tokens: u.cached_tokens,
      finish_reason: finishInfo(results[0]!),
      e2e_latency: latency,
      ...(results.some((r) => r.reasoning_tokens !== undefined) ? { reasoning_tokens: results.reduce((n, r) => n + (r.reasoning_tokens ?? 0), 0) } : {}),
      items: results.map((r) => itemMeta(r, call, latency)),
    },
  };
}

export function generate(deps: RouteDeps) {
  return async (c: Ctx): Promise<Response> => {
    const raw = await readJson(c, deps);
    const body = parseBody(generateRequestSchema, raw);
    const keepAlive = keepAliveOf(raw);
    const call = toGenerateCall(body);
    checkGenerations(call.prompts.length, call.n, deps.limits, { prompt: body.text != null ? 'text' : 'input_ids', n: 'sampling_params.n' });
    const model = await resolveModel(deps.runtime, call.model ?? (await defaultTextModel(deps.runtime)), 'text');
    const charge = await reserveGeneration(deps.runtime, c.get('principal'), model, call.prompts, call.n, call.sampling);
    const set = new GenerationSet(deps.runtime.engine, model.id, call.prompts, call.n, call.sampling, c.req.raw.signal, keepAlive);
    charge.watch(set);
    const id = randomId('', 32).toLowerCase();

    if (!call.stream) {
      const results = await respondWith(set, charge);
      return jsonResponse(finalBody(set, call, id, results));
    }

    const delivery = await startStream(set, charge);

    // Each event repeats the whole object so far (cumulative text), as SGLang streams.
    return sseResponse(
      (send) =>
        streamThenSettle(set, charge, async () => {
        const text = new Array<string>(set.count).fill('');
        const lps = Array.from({ length: set.count }, () => [] as NonNullable<GenerateResult['logprobs']>);
          for await (const e of set.sent()) {
            if (e.kind === 'error') throw e.error;
            if (e.kind === 'done') continue;
            text[e.gen] += e.ev.text;
            if (e.ev.logprobs) lps[e.gen]!.push(...e.ev.logprobs);
            const meta: Record<string, unknown> = {
              id,
              model: model.id,
              completion_tokens: set.delivered.reduce((a, b) => a + b, 0),
              finish_reason: null,
            };
            if (call.returnLogprob) {
              meta.output_token_logprobs = lps.length === 1 ? sglangLogprobs(lps[0]) : lps.map((l) => sglangLogprobs(l));
            }
            send({ text: [...text], meta_info: meta });
          }
          send(finalBody(set, call, id, set.results as GenerateResult[]));
        }),
      { ...delivery, onCancel: () => set.cancel(), requestId: c.get('requestId') },
    );
  };
}
