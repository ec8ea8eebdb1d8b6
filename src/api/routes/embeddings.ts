// POST /v1/embeddings. The engine returns full-width unit vectors; `dimensions`
// truncates and re-normalises here, and base64 is little-endian float32 as the
// openai SDK decodes it (it asks for base64 unless told otherwise).
import type { CreateEmbeddingResponse, Embedding } from 'openai/resources/embeddings';
import { reserveEmbedding, usageRecord } from '../charge.js';
import { type Ctx, type RouteDeps, readJson, resolveModel } from '../context.js';
import { invalidRequest } from '../errors.js';
import { jsonListResponse } from '../json-list.js';
import { checkEmbeddingInputs } from '../limits.js';
import { parseBody } from '../schemas/common.js';
import { keepAliveOf } from '../keep-alive.js';
import { embeddingInputs, embeddingRequestSchema } from '../schemas/embeddings.js';

export function shorten(v: Float32Array, dims: number): Float32Array {
  const out = v.slice(0, dims);
  let norm = 0;
  for (const x of out) norm += x * x;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let i = 0; i < out.length; i++) out[i]! /= norm;
  return out;
}

export function float32ToBase64(v: Float32Array): string {
  const bytes = new Uint8Array(v.length * 4);
  const view = new DataView(bytes.buffer);
  v.forEach((x, i) => view.setFloat32(i * 4, x, true));
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin);
}

export function embeddings(deps: RouteDeps) {
  return async (c: Ctx): Promise<Response> => {
    const raw = await readJson(c, deps);
    const body = parseBody(embeddingRequestSchema, raw);
    const keepAlive = keepAliveOf(raw);
    const model = await resolveModel(deps.runtime, body.model, 'embedding');
    const input = embeddingInputs(body.input);
    checkEmbeddingInputs(input.length, deps.limits);
    const hold = await reserveEmbedding(deps.runtime, c.get('principal'), model, input);
    const request = { model: model.id, input, max_total_tokens: deps.limits.embeddingTokens, ...keepAlive };
    const result = await deps.runtime.engine.embed(request).catch(async (err: unknown) => {
      await hold.settle(null);
      throw err;
    });
    const width = result.data[0]?.length ?? 0;
    const dims = body.dimensions ?? undefined;
    if (dims !== undefined && dims > width) {
      await hold.settle(null);
      throw invalidRequest(`'dimensions' is ${dims} but \`${model.id}\` produces ${width}-dimensional embeddings.`, 'dimensions');
    }
    const base64 = body.encoding_format === 'base64';
    // With base64 the embedding is a string, which the SDK's type does not model.
    const item = (index: number): Omit<Embedding, 'embedding'> & { embedding: number[] | string } => {
      const vec = result.data[index]!;
      const v = dims !== undefined && dims < vec.length ? shorten(vec, dims) : vec;
      return { object: 'embedding', index, embedding: base64 ? float32ToBase64(v) : Array.from(v) };
    };
    // The reply waits for its charge: a store that cannot take it means 503, not a free answer.
    await hold.settle(usageRecord(deps.runtime, model.id, { prompt_tokens: result.prompt_tokens, completion_tokens: 0 }), { beforeReply: true });
    const rest: Omit<CreateEmbeddingResponse, 'object' | 'data'> = {
      model: model.id,
      usage: { prompt_tokens: result.prompt_tokens, total_tokens: result.prompt_tokens },
    };
    // Written as the client reads: the whole reply is tens of megabytes for a large request.
    return jsonListResponse(result.data.length, item, rest);
  };
}
