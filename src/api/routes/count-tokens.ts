// POST /v1/messages/count_tokens: the prompt tokens a Messages request would have, counted by
// the engine through the same chat template, tools and thinking switch as the message renders
// them, so `input_tokens` is the message's own (its input_tokens + cache_read_input_tokens).
// Keyed and rate limited like every route; nothing is generated, so nothing is charged.
import { type Ctx, type RouteDeps, readJson, resolveModel } from '../context.js';
import { invalidRequest, jsonResponse } from '../errors.js';
import { asMessagesError } from '../messages/errors.js';
import { parseBody } from '../schemas/common.js';
import { countTokensRequestSchema, promptOf, toMessagesCall } from '../schemas/messages.js';
import { takesImages } from '../images.js';
import { fetchImageUrls } from '../image-urls.js';

export function countTokens(deps: RouteDeps) {
  return async (c: Ctx): Promise<Response> => {
    try {
      const body = parseBody(countTokensRequestSchema, await readJson(c, deps, { images: true }));
      const model = await resolveModel(deps.runtime, body.model, 'chat', body.tools?.length ? 'tools' : undefined);
      if (deps.runtime.upstreams?.has(model.id) || !deps.runtime.engine.countTokens) {
        throw invalidRequest(`The model \`${model.id}\` is served by an engine that does not count tokens here.`, 'model');
      }
      const call = toMessagesCall(body, model, takesImages(model) ? deps.limits : undefined);
      await fetchImageUrls(call.messages, deps.limits, c.req.raw.signal);
      const [input_tokens] = await deps.runtime.engine.countTokens({ model: model.id, prompts: [promptOf(call)] });
      return jsonResponse({ input_tokens });
    } catch (err) {
      throw asMessagesError(err);
    }
  };
}
