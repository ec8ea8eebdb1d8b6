// POST /detokenize (vLLM's): token ids back to text with the model's tokenizer, special
// tokens kept, so a /tokenize of messages comes back as the prompt the template wrote.
// Keyed and rate limited; not charged.
import type { Ctx, RouteDeps } from '../context.js';
import { readJson } from '../context.js';
import { jsonResponse } from '../errors.js';
import { parseBody } from '../schemas/common.js';
import { detokenizeRequestSchema } from '../schemas/detokenize.js';
import { tokenizerModel } from './tokenize.js';

export function detokenize(deps: RouteDeps) {
  return async (c: Ctx): Promise<Response> => {
    const body = parseBody(detokenizeRequestSchema, await readJson(c, deps));
    const model = await tokenizerModel(deps, body.model);
    const { prompt } = await deps.runtime.engine.detokenize!({ model: model.id, tokens: body.tokens });
    return jsonResponse({ prompt });
  };
}
