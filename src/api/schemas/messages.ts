// POST /v1/messages (Anthropic's Messages API) body → the chat call the engine runs. As the
// Responses API does, the request is rewritten as a chat completions body and goes through the
// chat schema, so both decode, constrain (tool grammar, output format) and sample alike, and a
// reasoning model's reply is split the same way. Anthropic's blocks become chat's messages:
// `system` (string or text blocks, joined by a blank line) the leading system message,
// tool_use blocks an assistant's tool calls, tool_result blocks tool messages, thinking blocks
// sent back the assistant's reasoning_content. Fields Hearth has nothing to act on are typed,
// so that a wrong type is still a 400 naming it, and otherwise ignored.
import { z } from 'zod';
import type { ChatMessage, ModelState, PromptInput } from '../../engine/protocol.js';
import { invalidRequest } from '../errors.js';
import { asMessagesError } from '../messages/errors.js';
import { chatRequestSchema, toChatCall, type ChatCall } from './chat.js';
import * as c from './common.js';
import { checkDepth } from './depth.js';
import { checkImageCount, imageFromUrl } from '../images.js';
import type { RequestLimits } from '../limits.js';

/** Anthropic publishes no limit; this keeps the per-token stop check of one request bounded. */
export const MAX_STOP_SEQUENCES = 16;

const jsonObject = z.record(z.string(), z.unknown());
/** cache_control: prompt caching is automatic here (the prefix cache), so a breakpoint changes nothing. */
const cacheControl = z.looseObject({ type: z.string() }).nullish();

const text = z.object({ type: z.literal('text'), text: z.string(), cache_control: cacheControl });
const image = z.object({ type: z.literal('image'), source: z.looseObject({ type: z.string() }), cache_control: cacheControl });
const toolUse = z.object({ type: z.literal('tool_use'), id: z.string().min(1), name: z.string().min(1), input: jsonObject, cache_control: cacheControl });
const resultPart = z.unknown().transform((p, ctx) => parseBlock(p, ctx, { text, image }));
const toolResult = z.object({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1),
  content: z.union([z.string(), z.array(resultPart)]).nullish(),
  /** Chat templates have no place for it: the result's text is shown as it is. */
  is_error: z.boolean().nullish(),
  cache_control: cacheControl,
});
const thinking = z.object({ type: z.literal('thinking'), thinking: z.string(), signature: z.string().nullish() });
const redactedThinking = z.object({ type: z.literal('redacted_thinking'), data: z.string() });

const BLOCKS = { text, image, tool_use: toolUse, tool_result: toolResult, thinking, redacted_thinking: redactedThinking };
type Block = z.output<(typeof BLOCKS)[keyof typeof BLOCKS]>;

/** A block by its `type`; an unknown type (documents, search results, server tools' blocks) is
 * refused naming it, and a known one's own issues keep their codes and paths. */
function parseBlock<S extends Record<string, z.ZodType>>(block: unknown, ctx: z.RefinementCtx, schemas: S): z.output<S[keyof S]> {
  const type = (block as { type?: unknown } | null)?.type;
  const schema = typeof type === 'string' && Object.hasOwn(schemas, type) ? schemas[type] : undefined;
  if (!schema) {
    const known = Object.keys(schemas).join(', ');
    ctx.addIssue({ code: 'custom', path: ['type'], message: `Content blocks of type '${String(type)}' are not supported here; Hearth takes ${known} blocks.`, continue: true });
    return z.NEVER;
  }
  const r = schema.safeParse(block);
  if (!r.success) {
    for (const issue of r.error.issues) ctx.addIssue({ ...issue, continue: true });
    return z.NEVER;
  }
  return r.data as z.output<S[keyof S]>;
}

const block = z.unknown().transform((b, ctx) => parseBlock(b, ctx, BLOCKS));
const textBlock = z.unknown().transform((b, ctx) => parseBlock(b, ctx, { text }));

const message = z.object({
  // Anthropic's SDK 1.x also sends system turns inside `messages`.
  role: z.enum(['user', 'assistant', 'system']),
  content: z.union([z.string(), z.array(block)]),
});

const customTool = z.object({
  type: z.literal('custom').nullish(),
  name: z.string().min(1),
  description: z.string().nullish(),
  input_schema: z.looseObject({ type: z.literal('object', { error: "an input_schema must be a JSON Schema of type 'object'" }) }),
  cache_control: cacheControl,
  strict: z.boolean().nullish(),
});

/** Custom tools; Anthropic's server and client tools (web search, bash, computer use, …) are refused by name. */
const tool = z.unknown().transform((t, ctx) => {
  const type = (t as { type?: unknown } | null)?.type;
  if (type !== undefined && type !== null && type !== 'custom') {
    ctx.addIssue({ code: 'custom', path: ['type'], message: `The tool type '${String(type)}' is not available on Hearth; only custom tools (name, description, input_schema) are.` });
    return z.NEVER;
  }
  const r = customTool.safeParse(t);
  if (!r.success) {
    for (const issue of r.error.issues) ctx.addIssue({ ...issue, continue: true });
    return z.NEVER;
  }
  return r.data;
});

const parallel = { disable_parallel_tool_use: z.boolean().nullish() };
const toolChoice = z.discriminatedUnion('type', [
  z.object({ type: z.literal('auto'), ...parallel }),
  z.object({ type: z.literal('any'), ...parallel }),
  z.object({ type: z.literal('tool'), name: z.string().min(1), ...parallel }),
  z.object({ type: z.literal('none') }),
]);

const display = z.enum(['summarized', 'omitted']).nullish();
/** `adaptive` and `between_tools` (API version 2026-10-21) think as `enabled` does; no budget
 * bounds the thinking (max_tokens bounds thinking and answer together). */
const thinkingConfig = z.discriminatedUnion('type', [
  z.object({ type: z.literal('enabled'), budget_tokens: z.int().min(0).nullish(), display }),
  z.object({ type: z.literal('adaptive'), display }),
  z.object({ type: z.literal('between_tools') }),
  z.object({ type: z.literal('disabled') }),
]);

const outputConfig = z.object({
  /** Hearth's models have no effort setting but thinking on or off (`thinking`). */
  effort: z.string().nullish(),
  format: z.object({ type: z.literal('json_schema'), schema: jsonObject }).nullish(),
});

/** The fields a Messages request and a count_tokens request share. */
const promptFields = {
  model: c.modelId,
  messages: z.array(message).min(1),
  system: z.union([z.string(), z.array(textBlock)]).nullish(),
  tools: z.array(tool).nullish(),
  tool_choice: toolChoice.nullish(),
  thinking: thinkingConfig.nullish(),
  output_config: outputConfig.nullish(),
  // Accepted, changing nothing here (docs/anthropic.md lists them).
  cache_control: cacheControl,
  speed: z.string().nullish(),
};

export const messagesRequestSchema = z.object({
  ...promptFields,
  max_tokens: z.int().positive(),
  stop_sequences: z.array(z.string()).max(MAX_STOP_SEQUENCES, { error: `at most ${MAX_STOP_SEQUENCES} stop sequences are allowed` }).nullish(),
  temperature: z.number().min(0).max(1).nullish(),
  top_p: c.topP,
  top_k: z.int().min(0).nullish(),
  stream: z.boolean().nullish(),
  metadata: z.object({ user_id: z.string().nullish() }).nullish(),
  // Accepted, changing nothing here (docs/anthropic.md lists them).
  service_tier: z.string().nullish(),
  inference_geo: z.string().nullish(),
  container: z.unknown().optional(),
  context_management: z.unknown().optional(),
  diagnostics: z.unknown().optional(),
  mcp_servers: z.array(z.unknown()).nullish(),
  user_profile_id: z.string().nullish(),
  workspace_id: z.string().nullish(),
});

export const countTokensRequestSchema = z.object(promptFields);

export type MessagesRequest = z.output<typeof messagesRequestSchema>;
export type CountTokensRequest = z.output<typeof countTokensRequestSchema>;
type PromptRequest = CountTokensRequest & Partial<Pick<MessagesRequest, 'max_tokens' | 'temperature' | 'top_p' | 'top_k' | 'metadata'>>;

type ChatBodyPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };
type ChatBodyMessage = { role: string; content: string | ChatBodyPart[] | null; tool_calls?: unknown[]; tool_call_id?: string; reasoning_content?: string };

/** A model that reads images: the request limits, and how many images the request has sent so far. */
interface ImageReading {
  limits: RequestLimits;
  count: number;
}

const texts = (blocks: { text: string }[], sep = '') => blocks.map((b) => b.text).join(sep);

function noImages(model: ModelState, param: string): never {
  throw invalidRequest(`The model \`${model.id}\` takes no images; send text blocks only.`, param);
}

/** An image block as chat's image_url part, checked against the limits where the request named it. */
function imagePart(source: { type: string; media_type?: unknown; data?: unknown; url?: unknown }, param: string, images: ImageReading): ChatBodyPart {
  checkImageCount(++images.count, images.limits, param);
  let url: string;
  if (source.type === 'base64' && typeof source.media_type === 'string' && typeof source.data === 'string') url = `data:${source.media_type};base64,${source.data}`;
  else if (source.type === 'url' && typeof source.url === 'string') url = source.url;
  else throw invalidRequest("An image's source is {type: 'base64', media_type, data} or {type: 'url', url}.", `${param}.source`);
  imageFromUrl(url, param, `${param}.source`, images.limits);
  return { type: 'image_url', image_url: { url } };
}

function onlyIn(role: string, type: string, param: string): never {
  throw invalidRequest(`A '${type}' block belongs in ${role === 'user' ? 'an assistant' : 'a user'} message, not in a ${role} message.`, param);
}

/** A user turn: its text blocks a user message, each tool_result a tool message, in order. */
function userTurn(blocks: Block[], i: number, model: ModelState, out: ChatBodyMessage[], images?: ImageReading): void {
  let pending: ChatBodyPart[] | undefined;
  const flush = () => {
    if (pending) out.push({ role: 'user', content: userContent(pending) });
    pending = undefined;
  };
  blocks.forEach((b, j) => {
    const param = `messages[${i}].content[${j}]`;
    if (b.type === 'text') (pending ??= []).push({ type: 'text', text: b.text });
    else if (b.type === 'image') (pending ??= []).push(images ? imagePart(b.source, param, images) : noImages(model, param));
    else if (b.type === 'tool_result') {
      flush();
      const parts = typeof b.content === 'string' ? [{ type: 'text' as const, text: b.content }] : (b.content ?? []);
      parts.forEach((p, k) => p.type === 'image' && noImages(model, `${param}.content[${k}]`));
      out.push({ role: 'tool', tool_call_id: b.tool_use_id, content: texts(parts as { text: string }[]) });
    } else onlyIn('user', b.type, param);
  });
  if (pending || !blocks.length) out.push({ role: 'user', content: userContent(pending ?? []) });
}

/** Text parts joined, or the parts kept where images are among them. */
function userContent(parts: ChatBodyPart[]): string | ChatBodyPart[] {
  return parts.some((p) => p.type === 'image_url') ? parts : parts.map((p) => (p.type === 'text' ? p.text : '')).join('');
}

/** An assistant turn: text, tool calls, and the thinking sent back (a redacted one is dropped). */
function assistantTurn(blocks: Block[], i: number, out: ChatBodyMessage[]): void {
  const said: string[] = [];
  const thought: string[] = [];
  const calls: unknown[] = [];
  blocks.forEach((b, j) => {
    const param = `messages[${i}].content[${j}]`;
    if (b.type === 'text') said.push(b.text);
    else if (b.type === 'thinking') thought.push(b.thinking);
    else if (b.type === 'tool_use') {
      checkDepth(b.input, `${param}.input`);
      calls.push({ id: b.id, type: 'function', function: { name: b.name, arguments: JSON.stringify(b.input) } });
    } else if (b.type !== 'redacted_thinking') onlyIn('assistant', b.type, param);
  });
  out.push({
    role: 'assistant',
    content: said.length || !calls.length ? said.join('') : null,
    ...(calls.length ? { tool_calls: calls } : {}),
    ...(thought.length ? { reasoning_content: thought.join('\n') } : {}),
  });
}

/** The conversation as chat messages. */
function conversation(b: PromptRequest, model: ModelState, images?: RequestLimits): ChatBodyMessage[] {
  const out: ChatBodyMessage[] = [];
  const reading = images ? { limits: images, count: 0 } : undefined;
  if (b.system != null) out.push({ role: 'system', content: typeof b.system === 'string' ? b.system : texts(b.system, '\n\n') });
  b.messages.forEach((m, i) => {
    const blocks = typeof m.content === 'string' ? [{ type: 'text' as const, text: m.content }] : m.content;
    if (m.role === 'system') {
      const bad = blocks.findIndex((x) => x.type !== 'text');
      if (bad >= 0) throw invalidRequest(`A system message holds text blocks only, not '${blocks[bad]!.type}'.`, `messages[${i}].content[${bad}]`);
      out.push({ role: 'system', content: texts(blocks as { text: string }[], '\n\n') });
    } else if (m.role === 'user') userTurn(blocks, i, model, out, reading);
    else assistantTurn(blocks, i, out);
  });
  const last = b.messages.length - 1;
  // Anthropic continues a final assistant turn (a prefill); a chat template renders whole turns
  // and would answer it with a new one, which is not what such a request asks for.
  if (b.messages[last]!.role === 'assistant') {
    throw invalidRequest('A conversation that ends with an assistant turn (a prefill) is not supported: the chat template renders whole turns. End it with a user turn.', `messages[${last}]`);
  }
  return out;
}

/** The chat completions body a Messages request stands for. */
export function toChatBody(b: PromptRequest, model: ModelState, images?: RequestLimits): Record<string, unknown> {
  const choice = b.tool_choice;
  const offered = b.tools ?? [];
  const format = b.output_config?.format;
  return {
    model: b.model,
    messages: conversation(b, model, images),
    // Anthropic's default, where chat's is 0.7.
    temperature: b.temperature ?? 1,
    top_p: b.top_p,
    top_k: b.top_k,
    max_completion_tokens: b.max_tokens,
    user: b.metadata?.user_id,
    // Thinking stays as the model's template has it unless it is turned off.
    reasoning_effort: b.thinking?.type === 'disabled' ? 'none' : undefined,
    tools: offered.length ? offered.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.input_schema } })) : undefined,
    // `auto` with no tools asks for nothing; chat would refuse it.
    tool_choice:
      choice == null || (choice.type === 'auto' && !offered.length)
        ? undefined
        : choice.type === 'any'
          ? 'required'
          : choice.type === 'tool'
            ? { type: 'function', function: { name: choice.name } }
            : choice.type,
    parallel_tool_calls: choice && 'disable_parallel_tool_use' in choice && choice.disable_parallel_tool_use ? false : undefined,
    response_format: format ? { type: 'json_schema', json_schema: { name: 'output', schema: format.schema } } : undefined,
  };
}

export interface MessagesCall extends ChatCall {
  /** The thinking's text is left out of thinking blocks (`thinking.display: "omitted"`). */
  omitThinking: boolean;
  /** The chat completions body it was made from (what an upstream model is sent). */
  chat: Record<string, unknown>;
}

/** The chat call for a Messages request (a count_tokens request has no max_tokens: the rest of the context). */
/** `images`: the request limits, where the model reads images. */
export function toMessagesCall(b: PromptRequest & { stop_sequences?: string[] | null }, model: ModelState, images?: RequestLimits): MessagesCall {
  const body = toChatBody(b, model, images);
  let call: ChatCall;
  try {
    call = toChatCall(c.parseBody(chatRequestSchema, body), model.tool_syntax, images);
  } catch (err) {
    throw asMessagesError(err, true);
  }
  // Past chat's limit of four: set on the call, not the chat body.
  call.sampling.stop = c.stopList(b.stop_sequences ?? null);
  const grammar = call.sampling.grammar;
  if (grammar && 'param' in grammar && grammar.param === 'response_format') grammar.param = 'output_config.format';
  const shown = b.thinking && 'display' in b.thinking ? b.thinking.display : undefined;
  return { ...call, omitThinking: shown === 'omitted', chat: body };
}

/** The prompt the engine is given for a call (what count_tokens counts). */
export const promptOf = (call: ChatCall): PromptInput => ({
  messages: call.messages satisfies ChatMessage[],
  ...(call.tools.tools ? { tools: call.tools.tools } : {}),
  ...(call.templateKwargs ? { template_kwargs: call.templateKwargs } : {}),
});
