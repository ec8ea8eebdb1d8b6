// What the engine is asked for a Messages request, from the router over the stub engine: the
// conversation as chat messages (system blocks joined by a blank line, tool_use blocks as the
// assistant's calls, tool_result blocks as tool messages, thinking sent back as reasoning_content),
// the sampling (temperature 1 by default, top_p, top_k, stop_sequences), the tool grammar of each
// tool_choice, thinking switched off, and the fields accepted and ignored.
import { describe, expect, it } from 'vitest';
import type { ChatMessage, GrammarSpec } from '../../src/engine/protocol.js';
import { setup } from './harness.js';

const weather = { name: 'get_weather', description: 'The weather in a city', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };

async function asked(extra: Record<string, unknown>) {
  const { post, engine } = setup();
  const res = await post('/v1/messages', { model: 'svc/tiny-chat', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }], ...extra });
  expect(res.status, await res.clone().text()).toBe(200);
  const call = engine.calls[0]!;
  const prompt = call.prompt as { messages: ChatMessage[]; tools?: unknown[]; template_kwargs?: Record<string, unknown> };
  return { prompt, sampling: call.sampling, body: (await res.json()) as Record<string, unknown> };
}

const tag = (g: GrammarSpec | undefined) => (g && g.type === 'structural_tag' ? (JSON.parse(g.tag) as { format: { type: string } }).format.type : undefined);

describe('a Messages request as the engine is asked for it (the router over the stub engine)', () => {
  it('joins system text blocks with a blank line into the leading system message, and reads a system turn in messages', async () => {
    const { prompt } = await asked({
      system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }, { type: 'text', text: 'Be kind.' }],
      messages: [{ role: 'system', content: 'Speak English.' }, { role: 'user', content: [{ type: 'text', text: 'Hello' }, { type: 'text', text: ' there' }] }],
    });
    expect(prompt.messages).toEqual([
      { role: 'system', content: 'Be brief.\n\nBe kind.' },
      { role: 'system', content: 'Speak English.' },
      { role: 'user', content: 'Hello there' },
    ]);
  });

  it('turns tool_use blocks into the assistant’s calls, tool_result blocks into tool messages, and thinking into reasoning_content', async () => {
    const { prompt } = await asked({
      tools: [weather],
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'I should look it up.', signature: 'sig' },
            { type: 'redacted_thinking', data: 'opaque' },
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: '21 degrees' }] },
            { type: 'text', text: 'And tomorrow?' },
          ],
        },
      ],
    });
    expect(prompt.messages).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: 'Checking.',
        reasoning_content: 'I should look it up.',
        tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: { city: 'Paris' } } }],
      },
      { role: 'tool', tool_call_id: 'toolu_1', content: '21 degrees' },
      { role: 'user', content: 'And tomorrow?' },
    ]);
    expect(prompt.tools).toEqual([{ type: 'function', function: { name: 'get_weather', description: 'The weather in a city', parameters: weather.input_schema } }]);
  });

  it('samples at temperature 1 unless told, with top_p, top_k, stop_sequences past chat’s four, and max_tokens', async () => {
    expect((await asked({})).sampling).toMatchObject({ temperature: 1, top_p: 1, top_k: -1, max_tokens: 16, stop: [] });
    const stops = ['a1', 'b2', 'c3', 'd4', 'e5', 'f6'];
    const { sampling } = await asked({ temperature: 0.2, top_p: 0.9, top_k: 40, stop_sequences: stops, metadata: { user_id: 'u-1' } });
    expect(sampling).toMatchObject({ temperature: 0.2, top_p: 0.9, top_k: 40, stop: stops });
  });

  it('asks for the tool grammar of each tool_choice: auto triggered, any and tool required, none without one', async () => {
    expect(tag((await asked({ tools: [weather] })).sampling.grammar)).toBe('triggered_tags');
    expect(tag((await asked({ tools: [weather], tool_choice: { type: 'auto' } })).sampling.grammar)).toBe('triggered_tags');
    expect(tag((await asked({ tools: [weather], tool_choice: { type: 'any' } })).sampling.grammar)).toBe('tags_with_separator');
    const named = (await asked({ tools: [weather], tool_choice: { type: 'tool', name: 'get_weather', disable_parallel_tool_use: true } })).sampling.grammar;
    expect(tag(named)).toBe('tags_with_separator');
    const none = await asked({ tools: [weather], tool_choice: { type: 'none' } });
    expect(none.sampling.grammar).toBeUndefined();
    expect(none.prompt.tools).toHaveLength(1);
    expect((await asked({ tool_choice: { type: 'auto' } })).sampling.grammar).toBeUndefined();
  });

  it('turns thinking off through the template with thinking disabled, and leaves it as the template has it otherwise', async () => {
    expect((await asked({ thinking: { type: 'disabled' } })).prompt.template_kwargs).toEqual({ enable_thinking: false });
    for (const thinking of [{ type: 'enabled', budget_tokens: 1024 }, { type: 'adaptive', display: 'summarized' }, { type: 'between_tools' }, undefined]) {
      expect((await asked(thinking ? { thinking } : {})).prompt.template_kwargs).toBeUndefined();
    }
  });

  it('shapes the answer with output_config.format’s JSON schema', async () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };
    const { sampling } = await asked({ output_config: { effort: 'low', format: { type: 'json_schema', schema } } });
    expect(sampling.grammar).toEqual({ type: 'json_schema', schema: JSON.stringify(schema), param: 'output_config.format' });
  });

  it('accepts and ignores the fields it has nothing to act on', async () => {
    const { body } = await asked({
      cache_control: { type: 'ephemeral', ttl: '5m' },
      service_tier: 'auto',
      speed: 'standard',
      inference_geo: 'us',
      container: null,
      context_management: { edits: [] },
      mcp_servers: [],
      metadata: { user_id: 'someone' },
      some_future_field: { x: 1 },
    });
    expect(body).toMatchObject({ type: 'message', role: 'assistant', stop_reason: 'end_turn' });
  });

  it('answers the stub’s reply as a message, with Anthropic’s usage and stop reasons', async () => {
    const { body } = await asked({});
    expect(body).toEqual({
      id: expect.stringMatching(/^msg_/),
      type: 'message',
      role: 'assistant',
      model: 'svc/tiny-chat',
      content: [{ type: 'text', text: 'Hello world!' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: expect.any(Number), output_tokens: 3, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    });
    expect((await asked({ stop_sequences: ['world'] })).body).toMatchObject({ content: [{ type: 'text', text: 'Hello ' }], stop_reason: 'stop_sequence', stop_sequence: 'world' });
    expect((await asked({ max_tokens: 2 })).body).toMatchObject({ content: [{ type: 'text', text: 'Hello world' }], stop_reason: 'max_tokens', stop_sequence: null });
  });
});
