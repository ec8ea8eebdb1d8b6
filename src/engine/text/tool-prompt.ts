// Tools in the prompt. A chat template that takes `tools` (Qwen, Hermes, Llama 3.1,
// Mistral...) renders them itself. One that does not (tiny-chat's plain ChatML) gets
// Hermes-style instructions in the system message, and the conversation's tool calls
// and tool results written as text in the same syntax, so every model sees one format.
import type { ChatMessage, ToolDefinition } from '../protocol.js';
import { contentText } from './content.js';

/** Whether a chat template renders tools (and tool calls) itself. */
export function templateTakesTools(template: string | null | undefined): boolean {
  return !!template && /\btools\b/.test(template) && /tool_calls?/.test(template);
}

export function fallbackToolPrompt(tools: ToolDefinition[]): string {
  return (
    'You may call one or more functions to assist with the user query.\n\n' +
    'You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n' +
    tools.map((t) => JSON.stringify(t)).join('\n') +
    '\n</tools>\n\nFor each function call, return a json object with function name and arguments ' +
    'within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
  );
}

/** The conversation as a template without tool support can render it. */
export function withFallbackTools(messages: ChatMessage[], tools: ToolDefinition[] | undefined): ChatMessage[] {
  const out: ChatMessage[] = messages.map((m) => {
    if (m.role === 'tool') return { role: 'user', content: `<tool_response>\n${contentText(m.content)}\n</tool_response>` };
    if (!m.tool_calls?.length) return m;
    const calls = m.tool_calls.map((c) => `<tool_call>\n${JSON.stringify({ name: c.function.name, arguments: c.function.arguments })}\n</tool_call>`);
    return { role: m.role, content: [contentText(m.content), ...calls].filter(Boolean).join('\n') };
  });
  if (!tools?.length) return out;
  const prompt = fallbackToolPrompt(tools);
  if (out[0]?.role === 'system') return [{ ...out[0], content: `${contentText(out[0].content)}\n\n${prompt}` }, ...out.slice(1)];
  return [{ role: 'system', content: prompt }, ...out];
}
