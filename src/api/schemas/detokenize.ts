// POST /detokenize body (vLLM's): token ids of one model's vocabulary; ids past its end are
// refused by the engine, which knows the vocabulary.
import { z } from 'zod';
import * as c from './common.js';

export const detokenizeRequestSchema = z.object({
  model: c.modelId,
  tokens: c.tokenIds,
});

export type DetokenizeRequestBody = z.output<typeof detokenizeRequestSchema>;
