// POST /v1/embeddings body. `dimensions` is checked against the model's width
// after the engine answers (the catalog does not record widths).
import { z } from 'zod';
import * as c from './common.js';

export const embeddingRequestSchema = z.object({
  model: c.modelId,
  input: z.union([
    z.string(),
    z.array(z.string()).min(1),
    c.tokenIds.min(1),
    z.array(c.tokenIds.min(1)).min(1),
  ]),
  encoding_format: z.enum(['float', 'base64']).nullish(),
  dimensions: z.int().min(1).nullish(),
  user: z.string().nullish(),
});

export type EmbeddingRequestBody = z.output<typeof embeddingRequestSchema>;

export function embeddingInputs(input: EmbeddingRequestBody['input']): (string | number[])[] {
  if (typeof input === 'string') return [input];
  if (input.length > 0 && typeof input[0] === 'number') return [input as number[]];
  return input as (string | number[])[];
}
