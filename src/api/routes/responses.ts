// POST /v1/responses: the Responses API on the chat engine path (same template, sampling,
// grammars, tools, keys, limits, caps and charging as chat completions), answered as a
// response object or as named SSE events.
import type { GenerateResult } from '../../engine/protocol.js';
import { reserveGeneration } from '../charge.js';
import { type Ctx, type RouteDeps, readJson, resolveModel } from '../context.js';
import { invalidRequest, jsonResponse, mapError } from '../errors.js';
import { GenerationSet } from '../generation.js';
import { randomId } from '../ids.js';
import { ResponseEvents } from '../responses/events.js';
import { outputItems, responseObject, type ResponseHead } from '../responses/object.js';
import { parseBody } from '../schemas/common.js';
import { responsesRequestSchema, toResponsesCall } from '../schemas/responses.js';
import { sseResponse } from '../sse.js';
import { replyMessage, StreamedReply } from '../tools/respond.js';
import { respondWith, startStream, streamThenSettle } from './shared.js';

export function responses(deps: RouteDeps) {
  return async (c: Ctx): Promise<Response> => {
    const body = parseBody(responsesRequestSchema, await readJson(c, deps));
    if (body.previous_response_id) {
      throw invalidRequest('previous_response_id is not supported yet: Hearth does not store responses. Send the whole conversation as `input` items.', 'previous_response_id');
    }
    if (deps.runtime.upstreams?.pool(body.model)) {
      throw invalidRequest(`The Responses API is not served for upstream models yet; ask \`${body.model}\` through /v1/chat/completions.`, 'model');
    }
    const model = await resolveModel(deps.runtime, body.model, 'chat', body.tools?.length ? 'tools' : undefined);
    const call = toResponsesCall(body, model.tool_syntax);
    const prompts = [{ messages: call.messages, ...(call.tools.tools ? { tools: call.tools.tools } : {}), template_kwargs: call.templateKwargs }];
    const charge = await reserveGeneration(deps.runtime, c.get('principal'), model, prompts, 1, call.sampling);
    const set = new GenerationSet(deps.runtime.engine, model.id, prompts, 1, call.sampling, c.req.raw.signal);
    charge.watch(set);
    const head: ResponseHead = { id: randomId('resp_'), created_at: Math.floor(Date.now() / 1000), model: model.id, body, call };

    if (!body.stream) {
      const [r] = (await respondWith(set, charge)) as [GenerateResult];
      const { message } = replyMessage(r.text, r.finish_reason, call.tools);
      const output = outputItems(message.content, message.tool_calls?.flatMap((t) => (t.type === 'function' ? [t] : [])) ?? [], r.finish_reason);
      const status = r.finish_reason === 'length' ? 'incomplete' : 'completed';
      return jsonResponse(responseObject(head, status, output, { usage: set.usage() }));
    }

    await startStream(set, charge);
    let events: ResponseEvents | undefined;
    return sseResponse(
      (send) =>
        streamThenSettle(set, charge, async () => {
          events = new ResponseEvents(head, send);
          events.start();
          const reply = new StreamedReply(call.tools);
          let streamed = '';
          for await (const e of set.events) {
            if (e.kind === 'error') throw e.error;
            if (e.kind === 'token') {
              streamed += e.ev.text;
              for (const d of reply.push(e.ev.text)) events.push(d);
            } else {
              // Text the engine released only at the end (a held-back partial stop string).
              const rest = e.result.text.length > streamed.length && e.result.text.startsWith(streamed) ? reply.push(e.result.text.slice(streamed.length)) : [];
              for (const d of [...rest, ...reply.end()]) events.push(d);
              events.finish(e.result.finish_reason, set.usage());
            }
          }
        }),
      {
        onCancel: () => set.cancel(),
        requestId: c.get('requestId'),
        named: {
          failed: (err) => {
            const message = mapError(err, c.get('requestId'))?.body.error.message ?? 'The response failed.';
            return events?.failed(message) ?? { type: 'error', code: 'server_error', message, param: null, sequence_number: 0 };
          },
        },
      },
    );
  };
}
