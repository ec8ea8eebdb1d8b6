// Reading Hermes-style tool calls out of text that arrives in pieces.
import { describe, expect, it } from 'vitest';
import { parseToolCalls, ToolCallParser, type ToolEvent } from '../../../src/api/tools/parser.js';

const text =
  'Sure.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Pa}ris", "n": {"a": 1}}}\n</tool_call>\n' +
  '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>';

function collect(events: ToolEvent[]) {
  let content = '';
  const calls: { name: string; arguments: string }[] = [];
  for (const e of events) {
    if (e.kind === 'content') content += e.text;
    else if (e.kind === 'call') calls.push({ name: e.name, arguments: '' });
    else calls[e.index]!.arguments += e.text;
  }
  return { content, calls };
}

describe('the tool-call parser', () => {
  it('reads content and every call from the whole text', () => {
    const { content, calls } = parseToolCalls(text);
    expect(content).toBe('Sure.');
    expect(calls.map((c) => c.name)).toEqual(['get_weather', 'get_time']);
    expect(JSON.parse(calls[0]!.arguments)).toEqual({ city: 'Pa}ris', n: { a: 1 } });
    expect(JSON.parse(calls[1]!.arguments)).toEqual({});
  });

  it('gives the same content and calls however the text is split', () => {
    const whole = parseToolCalls(text);
    for (let size = 1; size <= 7; size++) {
      const p = new ToolCallParser();
      const events: ToolEvent[] = [];
      for (let i = 0; i < text.length; i += size) events.push(...p.push(text.slice(i, i + size)));
      events.push(...p.end());
      const got = collect(events);
      expect(got.content.trim()).toBe(whole.content);
      expect(got.calls).toEqual(whole.calls);
    }
  });

  it('names a call as soon as its arguments begin, and never shows a tag as content', () => {
    const p = new ToolCallParser();
    expect(p.push('Hi <tool_')).toEqual([{ kind: 'content', text: 'Hi ' }]);
    expect(p.push('call>\n{"name": "f", "arguments": ')).toEqual([]);
    expect(p.push('{"x": 1')).toEqual([
      { kind: 'call', index: 0, name: 'f' },
      { kind: 'arguments', index: 0, text: '{"x": 1' },
    ]);
    expect(p.push('}}\n</tool_call>')).toEqual([{ kind: 'arguments', index: 0, text: '}' }]);
  });

  it('leaves text without calls as it is', () => {
    expect(parseToolCalls('just words < and > signs')).toEqual({ content: 'just words < and > signs', calls: [] });
  });
});
