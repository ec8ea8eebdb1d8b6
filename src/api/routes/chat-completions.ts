// POST /v1/chat/completions. n choices run as n concurrent generations; a stream
// forwards each TokenEvent as its own chunk the moment it arrives.
import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { GenerateResult, ThinkingStart, TokenEvent } from '../../engine/protocol.js';
import { type Ctx, type RouteDeps, readJson, resolveModel } from '../context.js';
import { GenerationSet } from '../generation.js';
import { reserveGeneration } from '../charge.js';
import { jsonResponse } from '../errors.js';
import { keepAliveOf } from '../keep-alive.js';
import { checkGenerations } from '../limits.js';
import { takesImages } from '../images.js';
import { fetchImageUrls } from '../image-urls.js';
import { nowSeconds, randomId } from '../ids.js';
import { chatLogprobs } from '../logprobs.js';
import { parseBody } from '../schemas/common.js';
import { chatRequestSchema, toChatCall } from '../schemas/chat.js';
import { sseResponse } from '../sse.js';
import { withReasoningTokens } from '../reasoning/index.js';
import { replyMessage, StreamedReply, type ReplyDelta } from '../tools/respond.js';
import { SYSTEM_FINGERPRINT, finishUsage, respondWith, startStream, streamThenSettle } from './shared.js';

export function chatCompletions(deps: RouteDeps) {
  return async (c: Ctx): Promise<Response> => {
    const raw = await readJson(c, deps, { images: true });
    const body = parseBody(chatRequestSchema, raw);
    const keepAlive = keepAliveOf(raw);
    checkGenerations(1, body.n ?? 1, deps.limits, { prompt: 'messages', n: 'n' });
    const model = await resolveModel(deps.runtime, body.model, 'chat', body.tools?.length ? 'tools' : undefined);
    const call = toChatCall(body, model.tool_syntax, takesImages(model) ? deps.limits : undefined);
    await fetchImageUrls(call.messages, deps.limits, c.req.raw.signal);
    const prompts = [{ messages: call.messages, ...(call.tools.tools ? { tools: call.tools.tools } : {}), template_kwargs: call.templateKwargs }];
    const charge = await reserveGeneration(deps.runtime, c.get('principal'), model, prompts, call.n, call.sampling);
    const set = new GenerationSet(deps.runtime.engine, model.id, prompts, call.n, call.sampling, c.req.raw.signal, keepAlive);
    charge.watch(set);
    const id = randomId('chatcmpl-');
    const created = nowSeconds();
    // A reasoning model's replies are split into thinking and answer, from where each started.
    const thinking = (start: ThinkingStart | undefined) => (model.reasoning ? (start ?? 'free') : undefined);

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
          ...replyMessage(r.text, r.finish_reason, call.tools, thinking(r.thinking)),
          logprobs: call.logprobs ? { content: chatLogprobs(r.logprobs), refusal: null } : null,
        })),
        usage: withReasoningTokens(finishUsage(usage), results),
      };
      return jsonResponse(body);
    }

    const delivery = await startStream(set, charge);

    const base = {
      id,
      object: 'chat.completion.chunk' as const,
      created,
      model: model.id,
      system_fingerprint: SYSTEM_FINGERPRINT,
      ...(call.includeUsage ? { usage: null } : {}),
    };
    const chunk = (choices: ChatCompletionChunk.Choice[]): ChatCompletionChunk => ({ ...base, choices });
    const delta = (index: number, d: ReplyDelta, ev?: TokenEvent): ChatCompletionChunk.Choice => ({
      index,
      delta: d,
      logprobs: call.logprobs ? { content: chatLogprobs(ev?.logprobs), refusal: null } : null,
      finish_reason: null,
    });

    return sseResponse(
      (send) =>
        streamThenSettle(set, charge, async () => {
          const streamed = new Array<string>(set.count).fill('');
          // Thinking becomes reasoning_content deltas; the answer content and call deltas (plain content when tools are off).
          // Each reply is made at its first event, which says where a reasoning model's reply starts.
          const replies = new Array<StreamedReply | undefined>(set.count);
          const replyOf = (g: number, start: ThinkingStart | undefined) => (replies[g] ??= new StreamedReply(call.tools, thinking(start)));
          for (let i = 0; i < set.count; i++) {
            send(chunk([{ index: i, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null }]));
          }
          for await (const e of set.sent()) {
            if (e.kind === 'error') throw e.error;
            if (e.kind === 'token') {
              if (e.ev.text === '' && !e.ev.logprobs?.length) continue;
              streamed[e.gen] += e.ev.text;
              const ds = replyOf(e.gen, e.ev.thinking).push(e.ev.text);
              if (ds.length === 0 && e.ev.logprobs?.length) ds.push({ content: '' });
              ds.forEach((d, k) => send(chunk([delta(e.gen, d, k === 0 ? e.ev : undefined)])));
            } else {
              // Text the engine released only at the end (a held-back partial stop string).
              const r = e.result;
              const sent = streamed[e.gen]!;
              const reply = replyOf(e.gen, r.thinking);
              const rest = r.text.length > sent.length && r.text.startsWith(sent) ? reply.push(r.text.slice(sent.length)) : [];
              for (const d of [...rest, ...reply.end()]) send(chunk([delta(e.gen, d)]));
              send(chunk([{ index: e.gen, delta: {}, logprobs: null, finish_reason: reply.finish(r.finish_reason) }]));
            }
          }
          if (call.includeUsage) send({ ...base, choices: [], usage: withReasoningTokens(finishUsage(set.usage()), set.results) });
        }),
      { ...delivery, onCancel: () => set.cancel(), requestId: c.get('requestId') },
    );
  };
}
