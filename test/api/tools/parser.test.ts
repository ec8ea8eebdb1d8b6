// Reading tool calls out of text that arrives in pieces, in each syntax (Hermes tags,
// Llama 3 JSON, Mistral [TOOL_CALLS]).
import { describe, expect, it } from 'vitest';
import { parseToolCalls, ToolCallParser, type ToolEvent } from '../../../src/api/tools/parser.js';

const text =
  'Sure.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Pa}ris", "n": {"a": 1}}}\n</tool_call>\n' +
  '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>';

/** The same two calls as each other syntax writes them (Llama 3's templates take one call a turn). */
const others = [
  ['mistral', 'Sure.[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Pa}ris", "n": {"a": 1}}}, {"name": "get_time", "arguments": {}}]', 2],
  ['llama3_json', 'Sure.{"name": "get_weather", "parameters": {"city": "Pa}ris", "n": {"a": 1}}}', 1],
] as const;

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
    // The newline between two calls is not streamed as content.
    const p = new ToolCallParser();
    expect(collect([...p.push(text), ...p.end()]).content).toBe('Sure.\n');
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

  for (const [syntax, written, count] of others) {
    it(`reads ${syntax} calls the same way, however the text is split`, () => {
      const whole = parseToolCalls(written, syntax);
      expect(whole.content).toBe('Sure.');
      expect(whole.calls).toEqual(parseToolCalls(text).calls.slice(0, count));
      for (let size = 1; size <= 7; size++) {
        const p = new ToolCallParser(syntax);
        const events: ToolEvent[] = [];
        for (let i = 0; i < written.length; i += size) events.push(...p.push(written.slice(i, i + size)));
        events.push(...p.end());
        expect(collect(events)).toEqual({ content: 'Sure.', calls: whole.calls });
      }
    });
  }

  it('treats text after a Mistral list, and a Llama trigger cut before its name, as content', () => {
    expect(parseToolCalls('[TOOL_CALLS][{"name": "f", "arguments": {}}] done', 'mistral')).toEqual({ content: 'done', calls: [{ name: 'f', arguments: '{}' }] });
    expect(parseToolCalls('see {"name": ', 'llama3_json')).toEqual({ content: 'see {"name": ', calls: [] });
  });

  it('leaves text without calls as it is', () => {
    expect(parseToolCalls('just words < and > signs')).toEqual({ content: 'just words < and > signs', calls: [] });
  });
});
