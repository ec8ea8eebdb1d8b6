// POST /v1/chat/completions body → what the engine needs.
import { z } from 'zod';
import { invalidRequest } from '../errors.js';
import type { ChatContentPart, ChatMessage, SamplingParams, ToolSyntax } from '../../engine/protocol.js';
import { checkImageCount, imageFromUrl } from '../images.js';
import type { RequestLimits } from '../limits.js';
import * as c from './common.js';
import { checkDepth } from './depth.js';
import { REASONING_EFFORTS, thinkingKwargs } from '../reasoning/index.js';
import { planTools, type ToolPlan } from '../tools/choice.js';
import { responseFormatGrammar, responseFormatSchema, structuredFields, toolCall } from './structured.js';

const contentPart = z.looseObject({ type: z.string(), text: z.unknown().optional(), image_url: z.unknown().optional() });

const imageUrl = z.object({ url: z.string().min(1), detail: c.imageDetail.nullish() });

// Text parts are joined into one string, or kept as parts around images where the model reads
// them (toChatMessages; a text-only model refuses them). Any other part (input_audio, file) is
// refused with a 400 naming it.
const content = z.union([
  z.string(),
  z.array(contentPart).superRefine((parts, ctx) => {
    parts.forEach((p, i) => {
      if (p.type === 'image_url') {
        const image = imageUrl.safeParse(p.image_url);
        for (const issue of image.error?.issues ?? []) ctx.addIssue({ code: 'custom', path: [i, 'image_url', ...issue.path.map(String)], message: `An 'image_url' part needs an 'image_url' object with a string 'url' (and 'detail' auto, low or high): ${issue.message}` });
      } else if (p.type !== 'text') {
        ctx.addIssue({
          code: 'custom',
          path: [i, 'type'],
          message: `Content parts of type '${p.type}' are not supported; only 'text' and 'image_url' parts are.`,
        });
      } else if (typeof p.text !== 'string') {
        ctx.addIssue({ code: 'custom', path: [i, 'text'], message: "A 'text' content part needs a string 'text'." });
      }
    });
  }),
  z.null(),
]);

export const chatMessage = z.object({
  role: z.enum(['system', 'user', 'assistant', 'developer', 'tool']),
  content: content.optional(),
  name: z.string().nullish(),
  tool_calls: z.array(toolCall).nullish(),
  tool_call_id: z.string().nullish(),
  /** An assistant turn's thinking, as a reasoning model's reply carried it (llama.cpp's field, and vLLM's before it renamed it). */
  reasoning_content: z.string().nullish(),
  /** The same, under the name vLLM's replies now use. */
  reasoning: z.string().nullish(),
});

export const chatRequestSchema = z.object({
  ...c.sharedFields,
  messages: z.array(chatMessage).min(1),
  max_tokens: c.positiveInt,
  max_completion_tokens: c.positiveInt,
  logprobs: z.boolean().nullish(),
  top_logprobs: z.int().min(0).max(c.MAX_LOGPROBS).nullish(),
  ...structuredFields,
  /** vLLM's and SGLang's field: extra variables for the model's chat template. */
  chat_template_kwargs: z.record(z.string(), z.unknown()).nullish(),
  /** "none" and "minimal" switch a reasoning model's thinking off where its template can. */
  reasoning_effort: z.enum(REASONING_EFFORTS).nullish(),
}).superRefine((b, ctx) => {
  if (b.top_logprobs != null && !b.logprobs) {
    ctx.addIssue({ code: 'custom', path: ['top_logprobs'], message: "'top_logprobs' needs 'logprobs' set to true." });
  }
});

export type ChatRequestBody = z.output<typeof chatRequestSchema>;

export interface ChatCall {
  model: string;
  messages: ChatMessage[];
  templateKwargs?: Record<string, unknown>;
  sampling: SamplingParams;
  n: number;
  stream: boolean;
  includeUsage: boolean;
  logprobs: boolean;
  /** Tools shown to the model, and whether its reply is read for calls. */
  tools: ToolPlan;
}

/** A message's content for the engine: text joined, or parts in order where it holds images a model reads. */
function messageContent(v: z.output<typeof content> | undefined, i: number, images: ImageReading | undefined): ChatMessage['content'] {
  if (v == null) return '';
  if (typeof v === 'string') return v;
  if (!images || !v.some((p) => p.type === 'image_url')) return v.map((p) => p.text as string).join('');
  return v.map((p, j): ChatContentPart => {
    if (p.type !== 'image_url') return { type: 'text', text: p.text as string };
    const part = `messages[${i}].content[${j}]`;
    const { url, detail } = p.image_url as z.output<typeof imageUrl>;
    images.count++;
    checkImageCount(images.count, images.limits, part);
    return { type: 'image', image: imageFromUrl(url, part, `${part}.image_url.url`, images.limits, detail ?? undefined) };
  });
}

/** A model that reads images, and how many a request has sent it so far. */
interface ImageReading {
  limits: RequestLimits;
  count: number;
}

/**
 * The messages as chat templates take them; /tokenize renders them through this too, so its
 * counts are chat's. `images`: the request limits where the model reads images (its
 * input_modalities include "image"); without them an image part is refused with the model's
 * name and the part's path.
 */
export function toChatMessages(list: z.output<typeof chatMessage>[], model: string, images?: RequestLimits): ChatMessage[] {
  if (!images) {
    list.forEach((m, i) => {
      if (!Array.isArray(m.content)) return;
      const j = m.content.findIndex((p) => p.type === 'image_url');
      if (j >= 0) c.noImages(model, `messages[${i}].content[${j}]`);
    });
  }
  const reading = images ? { limits: images, count: 0 } : undefined;
  return list.map((m, i) => {
    const out: ChatMessage = { role: m.role, content: messageContent(m.content, i, reading) };
    if (m.name != null) out.name = m.name;
    if (m.tool_call_id != null) out.tool_call_id = m.tool_call_id;
    // Templates read reasoning_content (Qwen3's); where a client sent both, it is that one.
    const thinking = m.reasoning_content ?? m.reasoning;
    if (thinking != null) out.reasoning_content = thinking;
    if (m.tool_calls?.length) out.tool_calls = m.tool_calls.map((t, j) => ({ ...t, function: { name: t.function.name, arguments: parseArguments(t.function.arguments, i, j) } }));
    return out;
  });
}

/** `syntax`: how the model writes tool calls (its ModelState's); `images`: the request limits where it reads images. */
export function toChatCall(b: ChatRequestBody, syntax?: ToolSyntax, images?: RequestLimits): ChatCall {
  const messages = toChatMessages(b.messages, b.model, images);
  const sampling = c.samplingFrom(b, b.max_completion_tokens ?? b.max_tokens, b.logprobs ? c.pick(b.top_logprobs, 0) : -1);
  // With tools, a response_format shapes the reply when it calls none (auto); forced calls leave no room for it.
  const tools = planTools(b, syntax, responseFormatSchema(b.response_format));
  const grammar = tools.grammar ?? responseFormatGrammar(b.response_format);
  if (grammar) sampling.grammar = grammar;
  if (b.chat_template_kwargs) checkDepth(b.chat_template_kwargs, 'chat_template_kwargs');
  const templateKwargs = thinkingKwargs(b.reasoning_effort, b.chat_template_kwargs);
  return {
    model: b.model,
    messages,
    ...(templateKwargs ? { templateKwargs } : {}),
    sampling,
    n: c.pick(b.n, 1),
    stream: b.stream === true,
    includeUsage: b.stream_options?.include_usage === true,
    logprobs: b.logprobs === true,
    tools,
  };
}

/** Chat templates take a call's arguments as an object; the API carries them as a JSON string. */
function parseArguments(text: string, i: number, j: number): unknown {
  const param = `messages[${i}].tool_calls[${j}].function.arguments`;
  let args: unknown;
  try {
    args = JSON.parse(text);
  } catch {
    throw invalidRequest('Tool call arguments must be a JSON string.', param);
  }
  checkDepth(args, param);
  return args;
}
