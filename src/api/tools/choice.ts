// tools + tool_choice + parallel_tool_calls → what the engine is asked for: the tools
// its chat template shows the model, and the grammar its reply must follow (in the
// model's own call syntax).
import type { z } from 'zod';
import type { GrammarSpec, ToolDefinition, ToolSyntax } from '../../engine/protocol.js';
import { checkSchema } from '../../engine/structured/limits.js';
import { invalidRequest } from '../errors.js';
import type { structuredFields } from '../schemas/structured.js';
import { toolCallGrammar } from './syntax.js';

type Fields = { [K in keyof typeof structuredFields]?: z.output<(typeof structuredFields)[K]> };

export interface ToolPlan {
  /** Shown to the model by the chat template (absent: no tools). */
  tools?: ToolDefinition[];
  grammar?: GrammarSpec;
  /** Whether the reply is read for tool calls, and in which syntax. */
  parse: boolean;
  syntax: ToolSyntax;
}

/** `content`: the JSON schema a response_format asks of a reply that calls no tool. */
export function planTools(b: Fields, syntax: ToolSyntax = 'hermes', content?: Record<string, unknown>): ToolPlan {
  const offered = b.tools ?? [];
  const choice = b.tool_choice ?? (offered.length ? 'auto' : 'none');
  if (!offered.length) {
    if (choice !== 'none') throw invalidRequest("'tool_choice' needs 'tools' to choose from.", 'tool_choice');
    return { parse: false, syntax };
  }
  offered.forEach((t, i) => {
    const p = t.function.parameters;
    if (p && p.type !== undefined && p.type !== 'object') {
      throw invalidRequest(`A function's parameters must be a JSON Schema of type 'object', not '${String(p.type)}'.`, `tools[${i}].function.parameters`);
    }
    // The same limits as any schema, before the chat template or the grammar serialise it.
    if (p) checkSchema(p, `tools[${i}].function.parameters`);
  });
  if (content) checkSchema(content, 'response_format');
  const tools: ToolDefinition[] = offered.map((t) => ({
    type: 'function',
    function: {
      name: t.function.name,
      ...(t.function.description != null ? { description: t.function.description } : {}),
      parameters: t.function.parameters ?? { type: 'object', properties: {} },
    },
  }));
  if (choice === 'none') return { tools, parse: false, syntax };
  const parallel = b.parallel_tool_calls !== false;
  const fns = tools.map((t) => t.function);
  if (typeof choice === 'object') {
    const named = fns.filter((f) => f.name === choice.function.name);
    if (!named.length) throw invalidRequest(`tool_choice names the function '${choice.function.name}', which is not among the tools.`, 'tool_choice');
    return { tools, grammar: toolCallGrammar(named, 'required', false, syntax), parse: true, syntax };
  }
  return { tools, grammar: toolCallGrammar(fns, choice, parallel, syntax, content), parse: true, syntax };
}
