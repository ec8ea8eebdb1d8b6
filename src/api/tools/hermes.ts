// The tool-call syntax Hearth asks for and reads back: Hermes-style tags, as Qwen 2.5 / 3,
// Hermes and many other templates write them (and as the fallback prompt teaches models
// whose template has no tool support):
//   <tool_call>
//   {"name": "get_weather", "arguments": {"city": "Paris"}}
//   </tool_call>
import type { GrammarSpec } from '../../engine/protocol.js';

export const OPEN = '<tool_call>';
export const CLOSE = '</tool_call>';
/** What the grammar writes between the name's quotes and the arguments. */
export const head = (name: string) => `${OPEN}\n{"name": ${JSON.stringify(name)}, "arguments": `;
export const tail = `}\n${CLOSE}`;

export interface OfferedTool {
  name: string;
  parameters?: Record<string, unknown> | null;
}

/**
 * The structural tag for tool calls. `auto`: free text, and once the model opens a
 * call, its name and arguments are constrained; `required`: call(s) only.
 */
export function toolCallGrammar(tools: OfferedTool[], mode: 'auto' | 'required', parallel: boolean): GrammarSpec {
  const tags = tools.map((t) => ({
    type: 'tag',
    begin: head(t.name),
    content: { type: 'json_schema', json_schema: t.parameters && Object.keys(t.parameters).length ? t.parameters : { type: 'object' } },
    end: tail,
  }));
  const format =
    mode === 'auto'
      ? { type: 'triggered_tags', triggers: [OPEN], tags, stop_after_first: !parallel }
      : { type: 'tags_with_separator', tags, separator: '\n', at_least_one: true, stop_after_first: !parallel };
  return { type: 'structural_tag', tag: JSON.stringify({ type: 'structural_tag', format }), param: 'tools' };
}
