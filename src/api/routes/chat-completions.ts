// POST /v1/chat/completions. n choices run as n concurrent generations; a stream
// forwards each TokenEvent as its own chunk the moment it arrives.
import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { GenerateResult, TokenEvent } from '../../engine/protocol.js';
import { type Ctx, type RouteDeps, readJson, resolveModel } from '../context.js';
import { GenerationSet } from '../generation.js';
import { reserveGeneration } from '../charge.js';
import { jsonResponse } from '../errors.js';
import { nowSeconds, randomId } from '../ids.js';
import { chatLogprobs } from '../logprobs.js';
import { parseBody } from '../schemas/common.js';
import { chatRequestSchema, toChatCall } from '../schemas/chat.js';
import { sseResponse } from '../sse.js';
import { replyMessage, StreamedReply } from '../tools/respond.js';
import { SYSTEM_FINGERPRINT, finishUsage, respondWith, startStream, streamThenSettle } from './shared.js';

export function chatCompletions(deps: RouteDeps) {
  return async (c: Ctx): Promise<Response> => {
    const body = parseBody(chatRequestSchema, await readJson(c, deps));
    const model = await resolveModel(deps.runtime, body.model, 'chat', body.tools?.length ? 'tools' : undefined);
    const call = toChatCall(body, model.tool_syntax);
    const prompts = [{ messages: call.messages, ...(call.tools.tools ? { tools: call.tools.tools } : {}), template_kwargs: call.templateKwargs }];
    const charge = await reserveGeneration(deps.runtime, c.get('principal'), model, prompts, call.n, call.sampling);
    const set = new GenerationSet(deps.runtime.engine, model.id, prompts, call.n, call.sampling, c.req.raw.signal);
    charge.watch(set);
    const id = randomId('chatcmpl-');
    const created = nowSeconds();

    if (!call.stream) {
      const results = await respondWith(set, charge);
      const usage = set.usage();
      const body: ChatCompletion = {
        id,
        object: 'chat.completion',
        created,
        model: model.id,
        system_fingerprint: SYSTEM_FINGERPRINT,
        choices: results.map((r: GenerateResult, index) => ({
          index,
          ...replyMessage(r.text, r.finish_reason, call.tools),
          logprobs: call.logprobs ? { content: chatLogprobs(r.logprobs), refusal: null } : null,
        })),
        usage: finishUsage(usage),
      };
      return jsonResponse(body);
    }

    await startStream(set, charge);

    const base = {
      id,
      object: 'chat.completion.chunk' as const,
      created,
      model: model.id,
      system_fingerprint: SYSTEM_FINGERPRINT,
      ...(call.includeUsage ? { usage: null } : {}),
    };
    const chunk = (choices: ChatCompletionChunk.Choice[]): ChatCompletionChunk => ({ ...base, choices });
    const delta = (index: number, d: ChatCompletionChunk.Choice.Delta, ev?: TokenEvent): ChatCompletionChunk.Choice => ({
      index,
      delta: d,
      logprobs: call.logprobs ? { content: chatLogprobs(ev?.logprobs), refusal: null } : null,
      finish_reason: null,
    });

    return sseResponse(
      (send) =>
        streamThenSettle(set, charge, async () => {
          const streamed = new Array<string>(set.count).fill('');
          // Tool calls: text becomes content and call deltas (plain content when tools are off).
          const replies = Array.from({ length: set.count }, () => new StreamedReply(call.tools));
          for (let i = 0; i < set.count; i++) {
            send(chunk([{ index: i, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null }]));
          }
          for await (const e of set.events) {
            if (e.kind === 'error') throw e.error;
            if (e.kind === 'token') {
              if (e.ev.text === '' && !e.ev.logprobs?.length) continue;
              streamed[e.gen] += e.ev.text;
              const ds = replies[e.gen]!.push(e.ev.text);
              if (ds.length === 0 && e.ev.logprobs?.length) ds.push({ content: '' });
              ds.forEach((d, k) => send(chunk([delta(e.gen, d, k === 0 ? e.ev : undefined)])));
            } else {
              // Text the engine released only at the end (a held-back partial stop string).
              const r = e.result;
              const sent = streamed[e.gen]!;
              const reply = replies[e.gen]!;
              const rest = r.text.length > sent.length && r.text.startsWith(sent) ? reply.push(r.text.slice(sent.length)) : [];
              for (const d of [...rest, ...reply.end()]) send(chunk([delta(e.gen, d)]));
              send(chunk([{ index: e.gen, delta: {}, logprobs: null, finish_reason: reply.finish(r.finish_reason) }]));
            }
          }
          if (call.includeUsage) send({ ...base, choices: [], usage: finishUsage(set.usage()) });
        }),
      { onCancel: () => set.cancel(), requestId: c.get('requestId') },
    );
  };
}
