// POST /tokenize (vLLM's and llama.cpp's server's): a prompt's tokens as the engine encodes
// it for the generating and embedding routes, so clients can count and trim before they send.
// Keyed and rate limited like every route; nothing is generated, so nothing is charged or
// recorded as usage.
import type { ModelState } from '../../engine/protocol.js';
import { type Ctx, type RouteDeps, readJson, resolveModel } from '../context.js';
import { invalidRequest, jsonResponse } from '../errors.js';
import { parseBody } from '../schemas/common.js';
import { tokenizeInput, tokenizeRequestSchema } from '../schemas/tokenize.js';
import { takesImages } from '../images.js';
import { fetchImageUrls } from '../image-urls.js';

/** vLLM's TokenizeResponse. */
export interface TokenizeResponse {
  count: number;
  max_model_len: number;
  tokens: number[];
  token_strs?: string[];
}

/** The model whose tokenizer a /tokenize or /detokenize request names: any local model that is up. */
export async function tokenizerModel(deps: RouteDeps, id: string): Promise<ModelState> {
  const model = await resolveModel(deps.runtime, id, 'tokens');
  // An upstream engine's tokenizer is not here to ask.
  if (deps.runtime.upstreams?.has(model.id)) {
    throw invalidRequest(`The model \`${model.id}\` is served by an upstream engine; its tokenizer is not here to ask.`, 'model');
  }
  if (!deps.runtime.engine.tokenize || !deps.runtime.engine.detokenize) {
    throw invalidRequest(`The engine serving \`${model.id}\` does not tokenize.`, 'model');
  }
  return model;
}

export function tokenize(deps: RouteDeps) {
  return async (c: Ctx): Promise<Response> => {
    const body = parseBody(tokenizeRequestSchema, await readJson(c, deps, { images: true }));
    const model = await tokenizerModel(deps, body.model);
    const input = tokenizeInput(body, model.tool_syntax, takesImages(model) ? deps.limits : undefined);
    if ('messages' in input.prompt) await fetchImageUrls(input.prompt.messages, deps.limits, c.req.raw.signal);
    const r = await deps.runtime.engine.tokenize!({ model: model.id, ...input });
    const reply: TokenizeResponse = {
      count: r.tokens.length,
      max_model_len: model.context_length,
      tokens: r.tokens,
      ...(r.token_strs ? { token_strs: r.token_strs } : {}),
    };
    return jsonResponse(reply);
  };
}
