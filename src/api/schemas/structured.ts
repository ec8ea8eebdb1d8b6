// The chat fields for structured outputs and tool calls, and the grammar each one asks for.
import { z } from 'zod';
import type { GrammarSpec } from '../../engine/protocol.js';
import { checkSchema } from '../../engine/structured/limits.js';

const jsonObject = z.record(z.string(), z.unknown());
/** A schema's or a function's name, as OpenAI restricts them. */
const name = z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, { error: 'A name must be 1-64 letters, digits, underscores or dashes.' });

/** The fields OpenAI puts beside a JSON schema (response format or function). */
const described = z.object({ name, description: z.string().nullish(), strict: z.boolean().nullish() });

export const responseFormat = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('text') }),
    z.object({ type: z.literal('json_object') }),
    z.object({
      type: z.literal('json_schema'),
      json_schema: described.extend({ schema: jsonObject.nullish() }),
    }),
  ])
  .nullish();

export const tool = z.object({
  type: z.literal('function'),
  function: described.extend({ parameters: jsonObject.nullish() }),
});

export const toolChoice = z
  .union([
    z.enum(['none', 'auto', 'required']),
    z.object({ type: z.literal('function'), function: z.object({ name: z.string() }) }),
  ])
  .nullish();

export const toolCall = z.object({
  id: z.string(),
  type: z.literal('function'),
  function: z.object({ name: z.string(), arguments: z.string() }),
});

export const structuredFields = {
  response_format: responseFormat,
  tools: z.array(tool).nullish(),
  tool_choice: toolChoice,
  parallel_tool_calls: z.boolean().nullish(),
};

export type ResponseFormat = z.output<typeof responseFormat>;

/** The JSON schema a response_format asks for (none for text). No schema (or `{}`) is any
 * JSON object, as for json_object. */
export function responseFormatSchema(f: ResponseFormat): Record<string, unknown> | undefined {
  if (f?.type === 'json_object') return { type: 'object' };
  if (f?.type === 'json_schema') {
    const schema = f.json_schema.schema;
    return schema && Object.keys(schema).length ? schema : { type: 'object' };
  }
  return undefined;
}

/** The grammar a response_format asks for (none for text). */
export function responseFormatGrammar(f: ResponseFormat): GrammarSpec | undefined {
  const schema = responseFormatSchema(f);
  if (!schema) return undefined;
  // Before anything serialises it (JSON.stringify recurses): depth, size, $refs (engine/structured/limits.ts).
  checkSchema(schema, 'response_format');
  if (Object.keys(schema).length === 1 && schema.type === 'object') return { type: 'json_object', param: 'response_format' };
  return { type: 'json_schema', schema: JSON.stringify(schema), param: 'response_format' };
}
