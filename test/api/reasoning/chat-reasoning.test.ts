// The chat route on a reasoning model, with the stub engine (the router's only fake engine):
// the thinking in reasoning_content and the answer in content, in replies and in streams
// (reasoning_content deltas first, a tag cut across tokens leaking into neither), the same text
// under `reasoning` too (vLLM's name for it now) wherever reasoning_content is, tool calls
// read from the answer only, the thinking's tokens in usage; a model that does not reason is
// left as it was.
import { describe, expect, test } from 'vitest';
import { validateAgainst } from '../../helpers/openapi.js';
import { readEvents, setup } from '../harness.js';

type Delta = { role?: string; content?: string | null; reasoning_content?: string; reasoning?: string; tool_calls?: { function: { name?: string; arguments?: string } }[] };
type Chunk = { choices: { index: number; delta: Delta; finish_reason: string | null }[]; usage?: Record<string, unknown> | null };

const TOKENS = ['<thi', 'nk>\n', 'Let me', ' think', '.\n', '</th', 'ink>', '\n\n', 'Hi', '!'];
const chat = (extra: Record<string, unknown> = {}) => ({ model: 'svc/tiny-chat', messages: [{ role: 'user', content: 'Hi' }], ...extra });

function reasoningSetup(tokens = TOKENS) {
  const s = setup();
  s.engine.modelStates = s.engine.modelStates.map((m) => (m.id === 'svc/tiny-chat' ? { ...m, reasoning: 'think' as const } : m));
  s.engine.script = () => ({ tokens, thinking: 'free', reasoningTokens: 7 });
  return s;
}

describe('chat completions from a reasoning model (stub engine)', () => {
  test('puts the thinking in reasoning_content and in reasoning, the answer in content, and counts reasoning tokens', async () => {
    const { post } = reasoningSetup();
    const body = await (await post('/v1/chat/completions', chat())).json();
    expect(body.choices[0].message).toEqual({ role: 'assistant', reasoning_content: 'Let me think.', reasoning: 'Let me think.', content: 'Hi!', refusal: null });
    expect(body.choices[0].finish_reason).toBe('stop');
    expect(body.usage.completion_tokens_details).toEqual({ reasoning_tokens: 7 });
    expect(validateAgainst('CreateChatCompletionResponse', body)).toEqual([]);
  });

  test('streams reasoning_content deltas (each with the same text as reasoning) first, then content, with no piece of a tag in either', async () => {
    const { post } = reasoningSetup();
    const events = await readEvents(await post('/v1/chat/completions', chat({ stream: true, stream_options: { include_usage: true } })));
    const chunks = events.slice(0, -1) as Chunk[];
    for (const c of chunks) expect(validateAgainst('CreateChatCompletionStreamResponse', c)).toEqual([]);
    const deltas = chunks.flatMap((c) => c.choices.map((x) => x.delta)).slice(1);
    const reasoning = deltas.filter((d) => d.reasoning_content !== undefined).map((d) => d.reasoning_content);
    const content = deltas.filter((d) => d.content).map((d) => d.content);
    expect(reasoning).toEqual(['Let me', ' think', '.']);
    for (const d of deltas) expect(d.reasoning).toBe(d.reasoning_content);
    expect(content).toEqual(['Hi', '!']);
    expect(deltas.findIndex((d) => d.content)).toBeGreaterThan(deltas.findLastIndex((d) => d.reasoning_content !== undefined));
    expect(JSON.stringify(deltas)).not.toMatch(/<|think>/);
    expect(chunks.at(-1)!.usage).toMatchObject({ completion_tokens_details: { reasoning_tokens: 7 } });
  });

  test('reads tool calls from the answer only, never from the thinking', async () => {
    const call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>';
    const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
    const { post } = reasoningSetup(['<think>', `I could call ${call}`, '</think>', '\n\n', 'No call needed.']);
    const plain = await (await post('/v1/chat/completions', chat({ tools }))).json();
    expect(plain.choices[0].message).toMatchObject({ reasoning_content: `I could call ${call}`, content: 'No call needed.' });
    expect(plain.choices[0].message.tool_calls).toBeUndefined();
    expect(plain.choices[0].finish_reason).toBe('stop');

    const answered = reasoningSetup(['<think>', 'Weather needs a call.', '</think>', '\n\n', call]);
    const called = await (await answered.post('/v1/chat/completions', chat({ tools }))).json();
    expect(called.choices[0].message).toMatchObject({ reasoning_content: 'Weather needs a call.', reasoning: 'Weather needs a call.', content: null });
    expect(called.choices[0].message.tool_calls[0].function).toEqual({ name: 'get_weather', arguments: '{"city": "Paris"}' });
    expect(called.choices[0].finish_reason).toBe('tool_calls');
  });

  test('gives a reply cut inside its thinking finish_reason length, the thinking so far and empty content', async () => {
    const { post, engine } = reasoningSetup();
    engine.script = () => ({ tokens: TOKENS.slice(0, 4), finish: 'length', thinking: 'free', reasoningTokens: 4 });
    const body = await (await post('/v1/chat/completions', chat())).json();
    expect(body.choices[0]).toMatchObject({ finish_reason: 'length', message: { reasoning_content: 'Let me think', reasoning: 'Let me think', content: '' } });
  });

  test('leaves the reply of a model that does not reason as the model wrote it, with no reasoning fields', async () => {
    const { post, engine } = setup();
    engine.script = () => ({ tokens: TOKENS });
    const body = await (await post('/v1/chat/completions', chat())).json();
    expect(body.choices[0].message).toEqual({ role: 'assistant', content: TOKENS.join(''), refusal: null });
    expect(body.usage.completion_tokens_details).toBeUndefined();
  });
});
