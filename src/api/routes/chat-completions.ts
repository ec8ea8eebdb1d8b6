// POST /v1/chat/completions. n choices run as n concurrent generations; a stream
// forwards each TokenEvent as its own chunk the moment it arrives.
import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { GenerateResult, TokenEvent } from '../../engine/protocol.js';
import { type Ctx, type RouteDeps, readJson, recordUsage, resolveModel } from '../context.js';
import { GenerationSet, type Usage } from '../generation.js';
import { jsonResponse } from '../errors.js';
import { nowSeconds, randomId } from '../ids.js';
import { chatLogprobs } from '../logprobs.js';
import { parseBody } from '../schemas/common.js';
import { chatRequestSchema, toChatCall } from '../schemas/chat.js';
import { sseResponse } from '../sse.js';
import { SYSTEM_FINGERPRINT, finishUsage, respondWith } from './shared.js';

export function chatCompletions(deps: RouteDeps) {
  return async (c: Ctx): Promise<Response> => {
    const call = toChatCall(parseBody(chatRequestSchema, await readJson(c, deps)));
    const model = await resolveModel(deps.runtime, call.model, 'chat');
    const set = new GenerationSet(deps.runtime.engine, model.id, [{ messages: call.messages, template_kwargs: call.templateKwargs }], call.n, call.sampling, c.req.raw.signal);
    const principal = c.get('principal');
    const record = (u: Usage) => recordUsage(deps.runtime, principal, model.id, u.prompt_tokens, u.completion_tokens);
    const id = randomId('chatcmpl-');
    const created = nowSeconds();

    if (!call.stream) {
      const results = await respondWith(set, record);
      const usage = set.usage();
      const body: ChatCompletion = {
        id,
        object: 'chat.completion',
        created,
        model: model.id,
        system_fingerprint: SYSTEM_FINGERPRINT,
        choices: results.map((r: GenerateResult, index) => ({
          index,
          message: { role: 'assistant', content: r.text, refusal: null },
          logprobs: call.logprobs ? { content: chatLogprobs(r.logprobs), refusal: null } : null,
          finish_reason: r.finish_reason,
        })),
        usage: finishUsage(usage),
      };
      return jsonResponse(body);
    }

    await set.started();

    const base = {
      id,
      object: 'chat.completion.chunk' as const,
      created,
      model: model.id,
      system_fingerprint: SYSTEM_FINGERPRINT,
      ...(call.includeUsage ? { usage: null } : {}),
    };
    const chunk = (choices: ChatCompletionChunk.Choice[]): ChatCompletionChunk => ({ ...base, choices });
    const delta = (index: number, content: string, ev?: TokenEvent): ChatCompletionChunk.Choice => ({
      index,
      delta: { content },
      logprobs: call.logprobs ? { content: chatLogprobs(ev?.logprobs), refusal: null } : null,
      finish_reason: null,
    });

    return sseResponse(
      async (send) => {
        const streamed = new Array<string>(set.count).fill('');
        try {
          for (let i = 0; i < set.count; i++) {
            send(chunk([{ index: i, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null }]));
          }
          for await (const e of set.events) {
            if (e.kind === 'error') throw e.error;
            if (e.kind === 'token') {
              if (e.ev.text === '' && !e.ev.logprobs?.length) continue;
              streamed[e.gen] += e.ev.text;
              send(chunk([delta(e.gen, e.ev.text, e.ev)]));
            } else {
              // Text the engine released only at the end (a held-back partial stop string).
              const r = e.result;
              const sent = streamed[e.gen]!;
              if (r.text.length > sent.length && r.text.startsWith(sent)) send(chunk([delta(e.gen, r.text.slice(sent.length))]));
              send(chunk([{ index: e.gen, delta: {}, logprobs: null, finish_reason: r.finish_reason }]));
            }
          }
          if (call.includeUsage) send({ ...base, choices: [], usage: finishUsage(set.usage()) });
        } finally {
          const u = set.usage();
          if (!set.cancelled || u.completion_tokens > 0) await record(u);
        }
      },
      { onCancel: () => set.cancel(), requestId: c.get('requestId') },
    );
  };
}
