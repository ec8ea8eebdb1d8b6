// POST /generate (SGLang's native route) body → what the engine needs.
import { z } from 'zod';
import type { PromptInput, SamplingParams } from '../../engine/protocol.js';
import * as c from './common.js';

const samplingParams = z.object({
  max_new_tokens: c.positiveInt,
  temperature: c.temperature,
  top_p: c.topP,
  top_k: c.topK,
  min_p: c.minP,
  presence_penalty: c.penalty,
  frequency_penalty: c.penalty,
  stop: c.stop,
  stop_token_ids: c.tokenIds.nullish(),
  n: c.n,
  seed: c.seed,
  ignore_eos: z.boolean().nullish(),
  // Structured outputs, as SGLang names them: one at most.
  json_schema: z.string().nullish(),
  regex: z.string().min(1).nullish(),
  ebnf: z.string().min(1).nullish(),
}).superRefine((sp, ctx) => {
  const given = (['json_schema', 'regex', 'ebnf'] as const).filter((k) => sp[k] != null);
  if (given.length > 1) ctx.addIssue({ code: 'custom', path: [given[1]!], message: `Give one of json_schema, regex and ebnf, not ${given.join(' and ')}.` });
});

export const generateRequestSchema = z
  .object({
    model: c.modelId.nullish(),
    text: z.union([z.string(), z.array(z.string()).min(1)]).nullish(),
    input_ids: z.union([c.tokenIds.min(1), z.array(c.tokenIds.min(1)).min(1)]).nullish(),
    sampling_params: samplingParams.nullish(),
    return_logprob: z.boolean().nullish(),
    top_logprobs_num: z.int().min(0).max(c.MAX_LOGPROBS).nullish(),
    stream: z.boolean().nullish(),
  })
  .superRefine((b, ctx) => {
    if (b.text == null && b.input_ids == null) {
      // `expected`/invalid_type makes the mapper call it missing_required_parameter.
      ctx.addIssue({ code: 'invalid_type', expected: 'string', path: ['text'], message: 'Either text or input_ids is required.' });
    } else if (b.text != null && b.input_ids != null) {
      ctx.addIssue({ code: 'custom', path: ['input_ids'], message: 'Give either text or input_ids, not both.' });
    }
  });

export type GenerateRequestBody = z.output<typeof generateRequestSchema>;

export interface GenerateCall {
  model: string | null;
  prompts: PromptInput[];
  sampling: SamplingParams;
  n: number;
  stream: boolean;
  returnLogprob: boolean;
  topLogprobsNum: number;
}

export function toGenerateCall(b: GenerateRequestBody): GenerateCall {
  const sp = b.sampling_params ?? {};
  let prompts: PromptInput[];
  if (b.text != null) prompts = (typeof b.text === 'string' ? [b.text] : b.text).map((text) => ({ text }));
  else {
    const ids = b.input_ids!;
    prompts = typeof ids[0] === 'number' ? [{ tokens: ids as number[] }] : (ids as number[][]).map((tokens) => ({ tokens }));
  }
  const returnLogprob = b.return_logprob === true;
  const topLogprobsNum = c.pick(b.top_logprobs_num, 0);
  const sampling: SamplingParams = {
    max_tokens: sp.max_new_tokens ?? 128,
    temperature: c.pick(sp.temperature, 1.0),
    top_p: c.pick(sp.top_p, 1),
    top_k: c.pick(sp.top_k, -1),
    min_p: c.pick(sp.min_p, 0),
    presence_penalty: c.pick(sp.presence_penalty, 0),
    frequency_penalty: c.pick(sp.frequency_penalty, 0),
    stop: c.stopList(sp.stop),
    stop_token_ids: sp.stop_token_ids ?? [],
    ignore_eos: sp.ignore_eos === true,
    logprobs: returnLogprob ? topLogprobsNum : -1,
  };
  if (sp.seed != null) sampling.seed = sp.seed;
  const param = (k: string) => `sampling_params.${k}`;
  if (sp.json_schema != null) sampling.grammar = { type: 'json_schema', schema: sp.json_schema, param: param('json_schema') };
  else if (sp.regex != null) sampling.grammar = { type: 'regex', pattern: sp.regex, param: param('regex') };
  else if (sp.ebnf != null) sampling.grammar = { type: 'ebnf', grammar: sp.ebnf, param: param('ebnf') };
  return {
    model: b.model ?? null,
    prompts,
    sampling,
    n: c.pick(sp.n, 1),
    stream: b.stream === true,
    returnLogprob,
    topLogprobsNum,
  };
}
