// The tool-call syntaxes Hearth asks for and reads back, one per family of chat
// templates (the model's own, detected by the engine from its template):
//   hermes       <tool_call>\n{"name": "f", "arguments": {…}}\n</tool_call>   (Qwen 2.5/3, Hermes; and the
//                fallback prompt for templates without tools)
//   llama3_json  {"name": "f", "parameters": {…}}                              (Llama 3.1/3.2's JSON tool calling:
//                one call per turn, as their templates allow)
//   mistral      [TOOL_CALLS][{"name": "f", "arguments": {…}}, …]               (Mistral v3 / Nemo)
import type { GrammarSpec, ToolSyntax } from '../../engine/protocol.js';

export interface OfferedTool {
  name: string;
  parameters?: Record<string, unknown> | null;
}

export interface Syntax {
  /** Where calls begin in free text. */
  trigger: string;
  /** Around each call's arguments. */
  head: (name: string) => string;
  tail: string;
  /** Mistral's list: around all the calls, and between two of them. */
  list?: { begin: string; end: string };
  separator: string;
  /** Whether the template takes more than one call in a turn. */
  parallel: boolean;
  /** For the parser: a call's head once the trigger is seen (group 1: the name as JSON), the
   * end of a call after its arguments, and (a list) what comes before a next call or ends them. */
  readHead: RegExp;
  readTail: RegExp;
  readNext?: RegExp;
  readEnd?: RegExp;
}

const NAME = String.raw`("(?:[^"\\]|\\.)*")`;

export const SYNTAXES: Record<ToolSyntax, Syntax> = {
  hermes: {
    trigger: '<tool_call>',
    head: (name) => `<tool_call>\n{"name": ${JSON.stringify(name)}, "arguments": `,
    tail: '}\n</tool_call>',
    separator: '\n',
    parallel: true,
    readHead: new RegExp(String.raw`^\s*\{\s*"name"\s*:\s*${NAME}\s*,\s*"arguments"\s*:\s*(?=\S)`),
    readTail: /^\s*\}\s*<\/tool_call>/,
  },
  llama3_json: {
    trigger: '{"name": ',
    head: (name) => `{"name": ${JSON.stringify(name)}, "parameters": `,
    tail: '}',
    separator: '; ', // as vLLM's llama3_json parser reads several; unused, as the templates take one call
    parallel: false,
    readHead: new RegExp(String.raw`^\s*${NAME}\s*,\s*"parameters"\s*:\s*(?=\S)`),
    readTail: /^\s*\}/,
  },
  mistral: {
    trigger: '[TOOL_CALLS]',
    head: (name) => `{"name": ${JSON.stringify(name)}, "arguments": `,
    tail: '}',
    list: { begin: '[TOOL_CALLS][', end: ']' },
    separator: ', ',
    parallel: true,
    readHead: new RegExp(String.raw`^\s*[[,]\s*\{\s*"name"\s*:\s*${NAME}\s*,\s*"arguments"\s*:\s*(?=\S)`),
    // The template writes each call's id after its arguments.
    readTail: /^\s*(?:,\s*"id"\s*:\s*"[^"]*"\s*)?\}/,
    readNext: /^\s*(?=,)/,
    readEnd: /^\s*\]/,
  },
};

/**
 * The structural tag for tool calls in a syntax. `auto`: free text, and once the model
 * opens a call, its name and arguments are constrained; `required`: call(s) only. `content`
 * (a response_format's JSON schema) makes `auto`'s alternative to calls that JSON instead of free text
 * (and then, but in Mistral's list, one call at most).
 */
export function toolCallGrammar(
  tools: OfferedTool[],
  mode: 'auto' | 'required',
  parallel: boolean,
  syntax: ToolSyntax = 'hermes',
  content?: Record<string, unknown>,
): GrammarSpec {
  const s = SYNTAXES[syntax];
  const many = parallel && s.parallel;
  const calls = tools.map((t) => ({
    type: 'tag',
    begin: s.head(t.name),
    content: { type: 'json_schema', json_schema: t.parameters && Object.keys(t.parameters).length ? t.parameters : { type: 'object' } },
    end: s.tail,
  }));
  const some = { type: 'tags_with_separator', tags: calls, separator: s.separator, at_least_one: true, stop_after_first: !many };
  const required = s.list ? { type: 'tag', begin: s.list.begin, content: some, end: s.list.end } : some;
  let format: unknown = required;
  // XGrammar 0.1.27 compiles tags_with_separator under `or` only inside a tag, so outside
  // Mistral's list such a reply holds one call.
  const json = { type: 'json_schema', json_schema: content };
  if (mode === 'auto' && content) format = { type: 'or', elements: s.list ? [required, json] : [...calls, json] };
  else if (mode === 'auto' && s.list) format = { type: 'triggered_tags', triggers: [s.trigger], tags: [required], stop_after_first: true };
  else if (mode === 'auto') format = { type: 'triggered_tags', triggers: [s.trigger], tags: calls, stop_after_first: !many };
  return { type: 'structural_tag', tag: JSON.stringify({ type: 'structural_tag', format }), param: 'tools' };
}
