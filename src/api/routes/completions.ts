// POST /v1/completions: raw text in, raw text out. Several prompts × n choices,
// indexed prompt-major (prompt i, sample j → index i·n + j) as OpenAI does.
import type { Completion, CompletionChoice } from 'openai/resources/completions';
import type { GenerateResult } from '../../engine/protocol.js';
import { type Ctx, type RouteDeps, readJson, resolveModel } from '../context.js';
import { invalidRequest, jsonResponse } from '../errors.js';
import { checkGenerations } from '../limits.js';
import { GenerationSet } from '../generation.js';
import { reserveGeneration } from '../charge.js';
import { nowSeconds, randomId } from '../ids.js';
import { legacyLogprobs } from '../logprobs.js';
import { parseBody } from '../schemas/common.js';
import { keepAliveOf } from '../keep-alive.js';
import { completionRequestSchema, toCompletionCall } from '../schemas/completions.js';
import { sseResponse } from '../sse.js';
import { SYSTEM_FINGERPRINT, finishUsage, respondWith, startStream, streamThenSettle } from './shared.js';

export function completions(deps: RouteDeps) {
  return async (c: Ctx): Promise<Response> => {
    const raw = await readJson(c, deps);
    const call = toCompletionCall(parseBody(completionRequestSchema, raw));
    const keepAlive = keepAliveOf(raw);
    checkGenerations(call.prompts.length, call.n, deps.limits, { prompt: 'prompt', n: 'n' });
    if (call.echo && call.stream && call.prompts.some((p) => p.text === null)) {
      // The rendered text of a token prompt is only known when the generation ends.
      throw invalidRequest('echo with stream is supported for text prompts only, not token arrays.', 'echo');
    }
    const model = await resolveModel(deps.runtime, call.model, 'text');
    const prompts = call.prompts.map((p) => p.input);
    const charge = await reserveGeneration(deps.runtime, c.get('principal'), model, prompts, call.n, call.sampling);
    const set = new GenerationSet(deps.runtime.engine, model.id, prompts, call.n, call.sampling, c.req.raw.signal, keepAlive);
    charge.watch(set);
    const id = randomId('cmpl-');
    const created = nowSeconds();
    const echoText = (g: number, r?: GenerateResult) => (call.echo ? (call.prompts[set.promptOf(g)]!.text ?? r?.prompt_text ?? '') : '');

    if (!call.stream) {
      const results = await respondWith(set, charge);
      const body: Completion = {
        id,
        object: 'text_completion',
        created,
        model: model.id,
        system_fingerprint: SYSTEM_FINGERPRINT,
        choices: results.map((r, index) => {
          const prefix = echoText(index, r);
          return {
            index,
            text: prefix + r.text,
            logprobs: call.logprobs ? legacyLogprobs(r.logprobs, prefix.length) : null,
            finish_reason: r.finish_reason,
          };
        }),
        usage: finishUsage(set.usage()),
      };
      return jsonResponse(body);
    }

    const delivery = await startStream(set, charge);

    const base = {
      id,
      object: 'text_completion' as const,
      created,
      model: model.id,
      system_fingerprint: SYSTEM_FINGERPRINT,
      ...(call.includeUsage ? { usage: null } : {}),
    };
    const chunk = (choice: CompletionChoice) => ({ ...base, choices: [choice] });

    return sseResponse(
      (send) =>
        streamThenSettle(set, charge, async () => {
        const streamed = new Array<string>(set.count).fill('');
        const offsets = new Array<number>(set.count).fill(0);
          if (call.echo) {
            for (let g = 0; g < set.count; g++) {
              const text = echoText(g);
              offsets[g] = text.length;
              send(chunk({ index: g, text, logprobs: null, finish_reason: null as unknown as CompletionChoice['finish_reason'] }));
            }
          }
          for await (const e of set.sent()) {
            if (e.kind === 'error') throw e.error;
            if (e.kind === 'token') {
              if (e.ev.text === '' && !e.ev.logprobs?.length) continue;
              const logprobs = call.logprobs ? legacyLogprobs(e.ev.logprobs, offsets[e.gen]!) : null;
              streamed[e.gen] += e.ev.text;
              offsets[e.gen]! += e.ev.text.length;
              send(chunk({ index: e.gen, text: e.ev.text, logprobs, finish_reason: null as unknown as CompletionChoice['finish_reason'] }));
            } else {
              const r = e.result;
              const sent = streamed[e.gen]!;
              const rest = r.text.length > sent.length && r.text.startsWith(sent) ? r.text.slice(sent.length) : '';
              send(chunk({ index: e.gen, text: rest, logprobs: null, finish_reason: r.finish_reason }));
            }
          }
          if (call.includeUsage) send({ ...base, choices: [], usage: finishUsage(set.usage()) });
        }),
      { ...delivery, onCancel: () => set.cancel(), requestId: c.get('requestId') },
    );
  };
}
