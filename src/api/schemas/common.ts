// Pieces shared by the request schemas. Optional fields accept null as "absent",
// as OpenAI's API does (SDKs and proxies send explicit nulls). Objects strip
// unknown keys: extra fields are ignored, not refused, like OpenAI.
import { z } from 'zod';
import { invalidRequest, ValidationError } from '../errors.js';
import type { SamplingParams } from '../../engine/protocol.js';

/** Parses or throws ValidationError (mapped to a 400 naming the field). */
export function parseBody<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const r = schema.safeParse(input);
  if (!r.success) throw new ValidationError(r.error, input);
  return r.data;
}

/**
 * The 400 for an image part sent to a model that reads text alone (every local model so far:
 * input_modalities ["text"]); `param` is the part's path.
 */
export function noImages(model: string, param: string): never {
  throw invalidRequest(`The model '${model}' takes no images (its input_modalities are ["text"]): send text parts only.`, param);
}

export const MAX_N = 8;
export const MAX_STOP = 4;
export const MAX_LOGPROBS = 20;

export const modelId = z.string().min(1);
/** How closely an image part asks to be looked at (chat's image_url.detail, Responses' input_image.detail). */
export const imageDetail = z.enum(['auto', 'low', 'high']);
export const temperature = z.number().min(0).max(2).nullish();
export const topP = z.number().gt(0).max(1).nullish();
export const penalty = z.number().min(-2).max(2).nullish();
export const positiveInt = z.int().positive().nullish();
export const seed = z.int().nullish();
export const n = z.int().min(1).max(MAX_N).nullish();
export const topK = z.int().min(-1).nullish();
export const minP = z.number().min(0).max(1).nullish();
export const tokenIds = z.array(z.int().nonnegative());

export const stop = z
  .union([z.string(), z.array(z.string()).max(MAX_STOP, { error: `at most ${MAX_STOP} stop sequences are allowed` })])
  .nullish();

export function stopList(s: string | string[] | null | undefined): string[] {
  if (s == null) return [];
  return (Array.isArray(s) ? s : [s]).filter((x) => x.length > 0);
}

export const streamOptions = z.object({ include_usage: z.boolean().nullish() }).nullish();

/** The sampling and streaming fields chat and completions share. top_k and min_p are
 * extensions that llama.cpp and vLLM accept on the OpenAI routes. */
export const sharedFields = {
  model: modelId,
  temperature,
  top_p: topP,
  top_k: topK,
  min_p: minP,
  n,
  stream: z.boolean().nullish(),
  stream_options: streamOptions,
  stop,
  seed,
  user: z.string().nullish(),
  presence_penalty: penalty,
  frequency_penalty: penalty,
  /** vLLM's extension: generate up to max_tokens even past EOS. */
  ignore_eos: z.boolean().nullish(),
};

export const pick = <T>(v: T | null | undefined, d: T): T => (v == null ? d : v);

type SharedBody = { [K in keyof typeof sharedFields]?: z.output<(typeof sharedFields)[K]> };

/** The engine's sampling parameters from the fields chat and completions share.
 * An absent max_tokens means "as many as fit in the context" to the engine. */
export function samplingFrom(b: SharedBody, maxTokens: number | null | undefined, logprobs: number): SamplingParams {
  const sampling: SamplingParams = {
    temperature: pick(b.temperature, 0.7),
    top_p: pick(b.top_p, 1),
    top_k: pick(b.top_k, -1),
    min_p: pick(b.min_p, 0),
    presence_penalty: pick(b.presence_penalty, 0),
    frequency_penalty: pick(b.frequency_penalty, 0),
    stop: stopList(b.stop),
    stop_token_ids: [],
    ignore_eos: b.ignore_eos === true,
    logprobs,
  };
  if (maxTokens != null) sampling.max_tokens = maxTokens;
  if (b.seed != null) sampling.seed = b.seed;
  return sampling;
}
