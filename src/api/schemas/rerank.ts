// Bodies of POST /v1/rerank (and /rerank, /v2/rerank) and /v1/score. Rerank takes the shapes
// Cohere's and Jina's clients send (documents as strings or `{text}` objects; their other
// fields, such as `rank_fields` or `max_chunks_per_doc`, are ignored as unknown keys are);
// score takes vLLM's `text_1` / `text_2`.
import { z } from 'zod';
import * as c from './common.js';

const document = z.union([z.string(), z.object({ text: z.string() })]);

export const rerankRequestSchema = z.object({
  model: c.modelId,
  query: z.string(),
  documents: z.array(document).min(1),
  top_n: z.int().min(1).nullish(),
  return_documents: z.boolean().nullish(),
  user: z.string().nullish(),
});

export type RerankRequestBody = z.output<typeof rerankRequestSchema>;

export const documentText = (d: RerankRequestBody['documents'][number]): string => (typeof d === 'string' ? d : d.text);

const texts = z.union([z.string(), z.array(z.string()).min(1)]);

export const scoreRequestSchema = z.object({
  model: c.modelId,
  text_1: texts,
  text_2: texts,
  user: z.string().nullish(),
});

export type ScoreRequestBody = z.output<typeof scoreRequestSchema>;
