// POST /v1/messages: Anthropic's Messages API on the chat engine path (same template, sampling,
// tool grammar, thinking split, keys, limits, caps and charging as chat completions), answered
// as a message or as Anthropic's named SSE events; an upstream model's request goes to its
// upstream's chat completions (src/upstream/messages.ts) with the same holds and charging.
// Errors leave in Anthropic's envelope (../messages/errors.ts, applied by the router to these routes).
import type { ThinkingStart } from '../../engine/protocol.js';
import { reserveGeneration } from '../charge.js';
import { type Ctx, type RouteDeps, readJson, resolveModel } from '../context.js';
import { jsonResponse } from '../errors.js';
import { GenerationSet } from '../generation.js';
import { randomId } from '../ids.js';
import { asMessagesError, errorEvent } from '../messages/errors.js';
import { MessageEvents } from '../messages/events.js';
import { contentBlocks, messageUsage, stopReason, type MessageBody } from '../messages/reply.js';
import { parseBody } from '../schemas/common.js';
import { keepAliveOf } from '../keep-alive.js';
import { messagesRequestSchema, promptOf, toMessagesCall } from '../schemas/messages.js';
import { sseResponse } from '../sse.js';
import { streamOneReply } from '../tools/one-reply.js';
import { replyMessage } from '../tools/respond.js';
import { forwardMessages } from '../../upstream/messages.js';
import { respondWith, startStream, streamThenSettle } from './shared.js';
import { forwardHeld } from './upstream.js';
import { takesImages } from '../images.js';
import { fetchImageUrls } from '../image-urls.js';

export function messages(deps: RouteDeps) {
  const answer = respond(deps);
  return async (c: Ctx): Promise<Response> => {
    try {
      return await answer(c);
    } catch (err) {
      // Named by the fields the client sent, not by those of the chat body it runs as.
      throw asMessagesError(err);
    }
  };
}

function respond(deps: RouteDeps) {
  return async (c: Ctx): Promise<Response> => {
    const raw = await readJson(c, deps, { images: true });
    const body = parseBody(messagesRequestSchema, raw);
    const keepAlive = keepAliveOf(raw);
    const model = await resolveModel(deps.runtime, body.model, 'chat', body.tools?.length ? 'tools' : undefined);
    const call = toMessagesCall(body, model, takesImages(model) ? deps.limits : undefined);
    if (deps.runtime.upstreams?.pool(model.id)) {
      const turn = { head: { id: randomId('msg_'), model: model.id }, chat: call.chat, stream: body.stream === true, sequences: call.sampling.stop, omitThinking: call.omitThinking };
      return forwardHeld(deps.runtime, c, model, 'chat', call.chat, (req) => forwardMessages(turn, req));
    }
    await fetchImageUrls(call.messages, deps.limits, c.req.raw.signal);
    const prompts = [promptOf(call)];
    const charge = await reserveGeneration(deps.runtime, c.get('principal'), model, prompts, 1, call.sampling);
    const set = new GenerationSet(deps.runtime.engine, model.id, prompts, 1, call.sampling, c.req.raw.signal, keepAlive);
    charge.watch(set);
    const head = { id: randomId('msg_'), model: model.id };
    // A reasoning model's reply is split into its thinking and its answer, from where it started.
    const thinking = (start: ThinkingStart | undefined) => (model.reasoning ? (start ?? 'free') : undefined);
    const sequences = call.sampling.stop;

    if (!body.stream) {
      const [r] = await respondWith(set, charge);
      const { message, finish_reason } = replyMessage(r!.text, r!.finish_reason, call.tools, thinking(r!.thinking));
      const reply: MessageBody = {
        id: head.id,
        type: 'message',
        role: 'assistant',
        model: head.model,
        content: contentBlocks(message, call.omitThinking),
        ...stopReason(finish_reason, r!.matched_stop, sequences),
        usage: messageUsage(set.usage(), r!.reasoning_tokens),
      };
      return jsonResponse(reply);
    }

    const delivery = await startStream(set, charge);
    return sseResponse(
      (send) =>
        streamThenSettle(set, charge, async () => {
          const events = new MessageEvents(head, send, call.omitThinking);
          events.start(messageUsage(set.usage()));
          await streamOneReply(set, call.tools, thinking, (d) => events.push(d), (r, result) => {
            const stop = stopReason(r.finish(result.finish_reason), result.matched_stop, sequences);
            events.finish(stop, messageUsage(set.usage(), result.reasoning_tokens));
          });
        }),
      {
        ...delivery,
        onCancel: () => set.cancel(),
        requestId: c.get('requestId'),
        named: { failed: (err) => errorEvent(err, c.get('requestId')) },
      },
    );
  };
}
