// POST /v1/responses body → the chat call the engine runs. The Responses API is chat
// completions in other clothes: `input` items become messages (`instructions` the leading
// system message; function_call and function_call_output items assistant tool calls and
// tool messages), `text.format` the response_format, function tools the chat tools. The
// result goes through the chat schema, so both endpoints decode, constrain and sample alike.
import { z } from 'zod';
import { invalidRequest } from '../errors.js';
import type { ToolSyntax } from '../../engine/protocol.js';
import { chatRequestSchema, toChatCall, type ChatCall } from './chat.js';
import * as c from './common.js';
import { REASONING_EFFORTS } from '../reasoning/index.js';
import { checkImageCount, imageFromUrl } from '../images.js';
import type { RequestLimits } from '../limits.js';

const jsonObject = z.record(z.string(), z.unknown());
const name = z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, { error: 'A name must be 1-64 letters, digits, underscores or dashes.' });

/** Text parts of a message and image parts (checked here, refused per model: refuseImages); any other part (files, audio) is refused naming its type. */
const textPart = z.looseObject({ type: z.string(), text: z.unknown().optional(), image_url: z.unknown().optional(), file_id: z.unknown().optional(), detail: z.unknown().optional() }).superRefine((p, ctx) => {
  if (p.type === 'input_image') {
    if (typeof p.image_url !== 'string' && typeof p.file_id !== 'string') ctx.addIssue({ code: 'custom', path: ['image_url'], message: "An 'input_image' part needs a string 'image_url' (or 'file_id')." });
    if (p.detail != null && !c.imageDetail.safeParse(p.detail).success) ctx.addIssue({ code: 'custom', path: ['detail'], message: "'detail' is one of auto, low or high." });
  } else if (p.type !== 'input_text' && p.type !== 'output_text' && p.type !== 'text') {
    ctx.addIssue({ code: 'custom', path: ['type'], message: `Content parts of type '${p.type}' are not supported; only 'input_text', 'output_text' and 'input_image' parts are.` });
  } else if (typeof p.text !== 'string') {
    ctx.addIssue({ code: 'custom', path: ['text'], message: 'A text part needs a string `text`.' });
  }
});

const message = z.object({
  type: z.literal('message').optional(),
  id: z.string().nullish(),
  role: z.enum(['user', 'assistant', 'system', 'developer']),
  content: z.union([z.string(), z.array(textPart)]),
});

const functionCall = z.object({
  type: z.literal('function_call'),
  call_id: z.string().min(1),
  name: z.string().min(1),
  arguments: z.string(),
  id: z.string().nullish(),
  status: z.string().nullish(),
});

const functionCallOutput = z.object({
  type: z.literal('function_call_output'),
  call_id: z.string().min(1),
  output: z.union([z.string(), z.array(textPart)]),
  id: z.string().nullish(),
  status: z.string().nullish(),
});

/** An item of a stored response by its id (`type` may be left out, as OpenAI's schema allows),
 * expanded into the conversation by the turn (../responses/turn.ts). */
const itemReference = z
  .object({ type: z.literal('item_reference').nullish(), id: z.string().min(1) })
  .transform((r) => ({ type: 'item_reference' as const, id: r.id }));

export type ItemReference = z.output<typeof itemReference>;

/** Items by their `type` (a message may leave it out; an object with only an `id` is a
 * reference); an unknown type is refused naming it. A reasoning item a client sends back
 * (the Agents SDK does) is dropped: a chat template takes no earlier thinking but the last
 * turn's, and Qwen3's drops even that. References are taken in requests only: stored
 * items are what references are expanded to. */
const item = (references: boolean) =>
  z.unknown().transform((item, ctx) => {
    const o = item as { type?: unknown; role?: unknown; id?: unknown } | null;
    const type = o?.type ?? (o && typeof o === 'object' && o.role === undefined && o.id !== undefined ? 'item_reference' : 'message');
    if (type === 'reasoning') return null;
    const schema =
      type === 'message'
        ? message
        : type === 'function_call'
          ? functionCall
          : type === 'function_call_output'
            ? functionCallOutput
            : type === 'item_reference' && references
              ? itemReference
              : undefined;
    // `continue: true`: the issue is the item's, so the union of `input` (a string or items)
    // reports it with its path instead of its own "Invalid input".
    if (!schema) {
      ctx.addIssue({
        code: 'custom',
        path: ['type'],
        message: `Input items of type '${String(type)}' are not supported; Hearth takes messages, function_call, function_call_output and item_reference items.`,
        continue: true,
      });
      return z.NEVER;
    }
    const r = schema.safeParse(item);
    if (!r.success) {
      // Their own codes, so that a missing field is answered as one (missing_required_parameter).
      for (const issue of r.error.issues) ctx.addIssue({ ...issue, continue: true });
      return z.NEVER;
    }
    return r.data as InputItem | ItemReference;
  });

const inputItem = item(false) as z.ZodType<InputItem | null>;
const requestItem = item(true);

/** The items left once dropped ones (null) are out. */
function present<T>(items: (T | null)[]): T[] {
  return items.filter((i): i is T => i !== null);
}

/** Function tools; the built-in ones (web search, file search, computer use, code interpreter, MCP, …) are refused by name. */
const tool = z.unknown().transform((t, ctx) => {
  const type = (t as { type?: unknown } | null)?.type;
  if (type !== 'function') {
    ctx.addIssue({ code: 'custom', path: ['type'], message: `The built-in tool '${String(type)}' is not available on Hearth; only 'function' tools are.` });
    return z.NEVER;
  }
  const r = z.object({ type: z.literal('function'), name, description: z.string().nullish(), parameters: jsonObject.nullish(), strict: z.boolean().nullish() }).safeParse(t);
  if (!r.success) {
    for (const issue of r.error.issues) ctx.addIssue({ ...issue, code: 'custom', message: issue.message });
    return z.NEVER;
  }
  return r.data;
});

const format = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text') }),
  z.object({ type: z.literal('json_object') }),
  z.object({ type: z.literal('json_schema'), name, schema: jsonObject, description: z.string().nullish(), strict: z.boolean().nullish() }),
]);

export const responsesRequestSchema = z.object({
  model: c.modelId,
  // Dropped items are taken out after the union, which would otherwise hide an item's own error.
  input: z.union([z.string(), z.array(requestItem)]).transform((v) => (typeof v === 'string' ? v : present(v))),
  instructions: z.string().nullish(),
  max_output_tokens: c.positiveInt,
  temperature: c.temperature,
  top_p: c.topP,
  stream: z.boolean().nullish(),
  tools: z.array(tool).nullish(),
  tool_choice: z
    .union([z.enum(['none', 'auto', 'required']), z.object({ type: z.literal('function'), name: z.string() })])
    .nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  text: z.object({ format: format.nullish() }).nullish(),
  previous_response_id: z.string().nullish(),
  store: z.boolean().nullish(),
  metadata: z.record(z.string(), z.string()).nullish(),
  user: z.string().nullish(),
  seed: c.seed,
  reasoning: z.object({ effort: z.enum(REASONING_EFFORTS).nullish(), summary: z.string().nullish() }).nullish(),
});

export type ResponsesRequest = z.output<typeof responsesRequestSchema>;

/** A request with its item references expanded (../responses/turn.ts): what the engine path reads. */
export type ResolvedRequest = Omit<ResponsesRequest, 'input'> & { input: string | InputItem[] };

/** Items as stored (a continued conversation's), read as a request's input items are. */
export const inputItems = z.array(inputItem).transform(present);

type ChatPartBody = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string; detail?: string } };
type ChatMessageBody = { role: string; content: string | ChatPartBody[] | null; tool_calls?: unknown[]; tool_call_id?: string };

export type InputItem = z.output<typeof message> | z.output<typeof functionCall> | z.output<typeof functionCallOutput>;
type Item = InputItem;
const isMessage = (item: Item): item is z.output<typeof message> => item.type === undefined || item.type === 'message';

const joinText = (v: string | { text?: unknown }[]) => (typeof v === 'string' ? v : v.map((p) => p.text as string).join(''));

type Part = { type: string; text?: unknown; image_url?: unknown; detail?: unknown };

/** A message's content as chat's: text joined, or parts in order where it holds images (input_image → image_url). */
function chatContent(v: string | Part[]): string | ChatPartBody[] {
  if (typeof v === 'string' || !v.some((p) => p.type === 'input_image')) return joinText(v);
  return v.map((p) =>
    p.type === 'input_image'
      ? { type: 'image_url', image_url: { url: p.image_url as string, ...(typeof p.detail === 'string' ? { detail: p.detail } : {}) } }
      : { type: 'text', text: p.text as string },
  );
}

/** The conversation as chat messages: function calls in a row join one assistant message. */
export function toMessages(b: ResolvedRequest): ChatMessageBody[] {
  const out: ChatMessageBody[] = [];
  if (b.instructions) out.push({ role: 'system', content: b.instructions });
  const items = typeof b.input === 'string' ? [{ role: 'user' as const, content: b.input }] : b.input;
  for (const item of items) {
    if (isMessage(item)) {
      out.push({ role: item.role, content: chatContent(item.content) });
    } else if (item.type === 'function_call') {
      const call = { id: item.call_id, type: 'function', function: { name: item.name, arguments: item.arguments } };
      const last = out.at(-1);
      if (last?.role === 'assistant' && last.tool_calls) last.tool_calls.push(call);
      else out.push({ role: 'assistant', content: null, tool_calls: [call] });
    } else {
      out.push({ role: 'tool', tool_call_id: item.call_id, content: joinText(item.output) });
    }
  }
  return out;
}

/** The chat completions body a Responses request stands for (also what an upstream that
 * has no /responses of its own is sent). */
export function toChatBody(b: ResolvedRequest): Record<string, unknown> {
  const messages = toMessages(b);
  if (!messages.length) throw invalidRequest('The input has no items.', 'input');
  const f = b.text?.format;
  return {
    model: b.model,
    messages,
    temperature: b.temperature,
    top_p: b.top_p,
    max_completion_tokens: b.max_output_tokens,
    reasoning_effort: b.reasoning?.effort,
    user: b.user,
    seed: b.seed,
    tools: b.tools?.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters, strict: t.strict } })),
    tool_choice: typeof b.tool_choice === 'object' && b.tool_choice ? { type: 'function', function: { name: b.tool_choice.name } } : b.tool_choice,
    parallel_tool_calls: b.parallel_tool_calls,
    response_format: f?.type === 'json_schema' ? { type: 'json_schema', json_schema: { name: f.name, schema: f.schema, description: f.description, strict: f.strict } } : f,
  };
}

/**
 * A local model's images, checked where the request named them (`input[1].content[0]`): refused
 * for a model that reads text alone, else held to the image limits (`images`), a file_id (there
 * are no files here) refused.
 */
export function checkImages(b: ResponsesRequest, images?: RequestLimits): void {
  if (typeof b.input === 'string') return;
  let count = 0;
  b.input.forEach((item, i) => {
    if (!('content' in item) || typeof item.content === 'string') return;
    item.content.forEach((p, j) => {
      if (p.type !== 'input_image') return;
      const param = `input[${i}].content[${j}]`;
      if (!images) c.noImages(b.model, param);
      checkImageCount(++count, images, param);
      if (typeof p.image_url !== 'string') throw invalidRequest("Images are sent by 'image_url' (a data: URL); this server keeps no files for 'file_id'.", `${param}.file_id`);
      imageFromUrl(p.image_url, param, `${param}.image_url`, images);
    });
  });
}

/** The chat call for a Responses request: one reply, its grammar errors blamed on Responses fields. */
export function toResponsesCall(b: ResolvedRequest, syntax?: ToolSyntax, images?: RequestLimits): ChatCall {
  const body = toChatBody(b);
  // Without image limits (an upstream's call, whose server reads its images itself) the call keeps the text.
  if (!images) body.messages = (body.messages as ChatMessageBody[]).map((m) => (Array.isArray(m.content) ? { ...m, content: joinText(m.content.filter((p) => p.type === 'text')) } : m));
  const chat = c.parseBody(chatRequestSchema, body);
  const call = toChatCall(chat, syntax, images);
  const grammar = call.sampling.grammar;
  if (grammar && 'param' in grammar && grammar.param === 'response_format') grammar.param = 'text.format';
  return call;
}
