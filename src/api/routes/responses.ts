// POST /v1/responses: the Responses API on the chat engine path (same template, sampling,
// grammars, tools, keys, limits, caps and charging as chat completions), answered as a
// response object or as named SSE events. A request may continue a stored response
// (previous_response_id), and its answer is stored unless it says store: false; a
// stream's is stored before its last event, so a client may continue from it at once.
// An upstream model's request goes to its upstream (src/upstream/responses.ts) with the
// same continuation, storage, holds and charging.
import type { ThinkingStart } from '../../engine/protocol.js';
import { reserveGeneration } from '../charge.js';
import { type Ctx, type RouteDeps, readJson, resolveModel } from '../context.js';
import { jsonResponse, mapError } from '../errors.js';
import { GenerationSet } from '../generation.js';
import { randomId } from '../ids.js';
import { ResponseEvents } from '../responses/events.js';
import { outputItems, responseObject, type ResponseBody, type ResponseHead } from '../responses/object.js';
import { asResponsesError, responsesText } from '../responses/params.js';
import { beginTurn } from '../responses/turn.js';
import { parseBody } from '../schemas/common.js';
import { keepAliveOf } from '../keep-alive.js';
import { checkImages, responsesRequestSchema, toChatBody, toResponsesCall, type ResponsesRequest } from '../schemas/responses.js';
import { sseResponse } from '../sse.js';
import { streamOneReply } from '../tools/one-reply.js';
import { replyMessage } from '../tools/respond.js';
import { forwardResponses } from '../../upstream/responses.js';
import { respondWith, startStream, streamThenSettle } from './shared.js';
import { forwardHeld } from './upstream.js';
import { takesImages } from '../images.js';
import { fetchImageUrls } from '../image-urls.js';

export function responses(deps: RouteDeps) {
  const answer = respond(deps);
  return async (c: Ctx): Promise<Response> => {
    let instructions = false;
    try {
      return await answer(c, (body) => (instructions = Boolean(body.instructions)));
    } catch (err) {
      // Named by the fields the client sent, not by those of the chat body it runs as.
      throw asResponsesError(err, instructions);
    }
  };
}

function respond(deps: RouteDeps) {
  return async (c: Ctx, read: (body: ResponsesRequest) => void): Promise<Response> => {
    const raw = await readJson(c, deps, { images: true });
    const body = parseBody(responsesRequestSchema, raw);
    const keepAlive = keepAliveOf(raw);
    read(body);
    const model = await resolveModel(deps.runtime, body.model, 'chat', body.tools?.length ? 'tools' : undefined);
    const upstream = deps.runtime.upstreams?.pool(model.id);
    // An upstream model may take images: its server answers for them.
    const images = takesImages(model) ? deps.limits : undefined;
    if (!upstream) checkImages(body, images);
    const turn = await beginTurn(deps.runtime.access, c.get('principal'), body);
    const call = toResponsesCall({ ...body, input: turn.input }, model.tool_syntax, upstream ? undefined : images);
    if (upstream) {
      const head: ResponseHead = { id: randomId('resp_'), created_at: Math.floor(Date.now() / 1000), model: model.id, body, call };
      const cost = toChatBody({ ...body, input: turn.input });
      return forwardHeld(deps.runtime, c, model, 'chat', cost, (req) => forwardResponses({ head, raw, input: turn.input, keep: turn.keep }, req));
    }
    await fetchImageUrls(call.messages, deps.limits, c.req.raw.signal);
    const prompts = [{ messages: call.messages, ...(call.tools.tools ? { tools: call.tools.tools } : {}), template_kwargs: call.templateKwargs }];
    const charge = await reserveGeneration(deps.runtime, c.get('principal'), model, prompts, 1, call.sampling);
    const set = new GenerationSet(deps.runtime.engine, model.id, prompts, 1, call.sampling, c.req.raw.signal, keepAlive);
    charge.watch(set);
    const head: ResponseHead = { id: randomId('resp_'), created_at: Math.floor(Date.now() / 1000), model: model.id, body, call };
    // A reasoning model's reply is split into its thinking (a reasoning item) and its answer, from where it started.
    const thinking = (start: ThinkingStart | undefined) => (model.reasoning ? (start ?? 'free') : undefined);

    if (!body.stream) {
      let final: ResponseBody | undefined;
      await respondWith(set, charge, async ([r]) => {
        const { message } = replyMessage(r!.text, r!.finish_reason, call.tools, thinking(r!.thinking));
        const calls = message.tool_calls?.flatMap((t) => (t.type === 'function' ? [t] : [])) ?? [];
        const output = outputItems(message.content, calls, r!.finish_reason, (message as { reasoning_content?: string | null }).reasoning_content);
        final = responseObject(head, r!.finish_reason === 'length' ? 'incomplete' : 'completed', output, { usage: set.usage(), reasoningTokens: r!.reasoning_tokens });
        await turn.keep(final);
      });
      return jsonResponse(final);
    }

    const delivery = await startStream(set, charge);
    let events: ResponseEvents | undefined;
    return sseResponse(
      (send) =>
        streamThenSettle(set, charge, async () => {
          const stream = (events = new ResponseEvents(head, send)); // kept for `failed`, below
          stream.start();
          await streamOneReply(set, call.tools, thinking, (d) => stream.push(d), async (_, result) => {
            const final = stream.finish(result.finish_reason, set.usage(), result.reasoning_tokens);
            await turn.keep(final);
            stream.complete(final);
          });
        }),
      {
        ...delivery,
        onCancel: () => set.cancel(),
        requestId: c.get('requestId'),
        named: {
          failed: (err) => {
            const message = responsesText(mapError(err, c.get('requestId'))?.body.error.message ?? 'The response failed.');
            return events?.failed(message) ?? { type: 'error', code: 'server_error', message, param: null, sequence_number: 0 };
          },
        },
      },
    );
  };
}
