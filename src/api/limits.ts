// How much one request may ask for: what it costs the server grows with it (each embedding
// input is a row of a run and a vector in the reply; each generation holds a sequence), so a
// body under the size limit could still ask for gigabytes. Past a limit: a 400 naming the field.
import { invalidRequest } from './errors.js';

/** Which image URLs besides data: URLs the server fetches (image-urls.ts). */
export interface ImageUrlPolicy {
  /** Hosts (`name` or `name:port`) whose http(s) URLs may be fetched. */
  hosts?: string[];
  /** The page's origin: its blob: URLs and same-origin URLs (a relative URL resolved against it) may be fetched. */
  pageOrigin?: string;
  /** Milliseconds a fetch may take, body included (default 10,000). */
  timeoutMs?: number;
}

export interface RequestLimits {
  /** Inputs of one embeddings request (OpenAI's limit: 2,048), and pairs of one rerank or score. */
  embeddingInputs: number;
  /** Tokens of one embeddings request's inputs in all (OpenAI's limit: 300,000). */
  embeddingTokens: number;
  /** Generations one request starts: prompts × n on /v1/completions and /generate. */
  generations: number;
  /** Images one request may hold (--max-images). */
  images: number;
  /** An image's bytes, decoded from its data: URL (--max-image-bytes; a 413 past it). */
  imageBytes: number;
  /** Which image URLs besides data: URLs may be fetched (none when absent). */
  imageUrls?: ImageUrlPolicy;
  /** An uploaded audio file's bytes (--max-audio-bytes; a 413 past it, refused while reading). */
  audioBytes: number;
  /** The longest audio one request may carry, in seconds (--max-audio-seconds; a 400 past it). */
  audioSeconds: number;
}

// Audio: OpenAI's 25 MiB upload limit; an hour of audio.
export const DEFAULT_LIMITS: RequestLimits = { embeddingInputs: 2048, embeddingTokens: 300_000, generations: 128, images: 16, imageBytes: 20_000_000, audioBytes: 26_214_400, audioSeconds: 3600 };

export function requestLimits(o: {
  maxEmbeddingInputs?: number;
  maxEmbeddingTokens?: number;
  maxGenerations?: number;
  maxImages?: number;
  maxImageBytes?: number;
  imageUrls?: ImageUrlPolicy;
  maxAudioBytes?: number;
  maxAudioSeconds?: number;
}): RequestLimits {
  return {
    embeddingInputs: o.maxEmbeddingInputs ?? DEFAULT_LIMITS.embeddingInputs,
    embeddingTokens: o.maxEmbeddingTokens ?? DEFAULT_LIMITS.embeddingTokens,
    generations: o.maxGenerations ?? DEFAULT_LIMITS.generations,
    images: o.maxImages ?? DEFAULT_LIMITS.images,
    imageBytes: o.maxImageBytes ?? DEFAULT_LIMITS.imageBytes,
    audioBytes: o.maxAudioBytes ?? DEFAULT_LIMITS.audioBytes,
    audioSeconds: o.maxAudioSeconds ?? DEFAULT_LIMITS.audioSeconds,
    ...(o.imageUrls ? { imageUrls: o.imageUrls } : {}),
  };
}

export function checkEmbeddingInputs(count: number, limits: RequestLimits): void {
  if (count > limits.embeddingInputs) {
    throw invalidRequest(`'input' has ${count} items; one request may have at most ${limits.embeddingInputs}.`, 'input');
  }
}

/** A rerank's documents or a score's pairs: each a row of a run, as an embedding input is. */
export function checkPairs(count: number, limits: RequestLimits, field: string): void {
  if (count > limits.embeddingInputs) {
    throw invalidRequest(`'${field}' has ${count} items; one request may have at most ${limits.embeddingInputs}.`, field);
  }
}

/**
 * prompts × n within the limit. The 400 names the prompt field (`prompt`, `text`,
 * `input_ids`) when the prompts alone are too many, else `n` (its own field name given).
 */
export function checkGenerations(prompts: number, n: number, limits: RequestLimits, fields: { prompt: string; n: string }): void {
  if (prompts * n <= limits.generations) return;
  const max = limits.generations;
  if (prompts > max) throw invalidRequest(`'${fields.prompt}' has ${prompts} prompts; one request may have at most ${max}.`, fields.prompt);
  throw invalidRequest(`${prompts} prompts × n = ${n} asks for ${prompts * n} generations; one request may ask for at most ${max}.`, fields.n);
}
