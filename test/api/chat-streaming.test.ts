import { describe, expect, test } from 'vitest';
import { EngineError } from '../../src/engine/errors.js';
import { validateAgainst } from '../helpers/openapi.js';
import { parseEvents, readEvents, setup } from './harness.js';

type Chunk = {
  id: string;
  object: string;
  created: number;
  choices: { index: number; delta: { role?: string; content?: string }; finish_reason: string | null; logprobs?: unknown }[];
  usage?: unknown;
};

const body = (extra: Record<string, unknown> = {}) => ({
  model: 'svc/tiny-chat',
  messages: [{ role: 'user', content: 'Say hello' }],
  stream: true,
  ...extra,
});

describe('chat streaming with the stub engine', () => {
  test('frames role chunk, content chunks, finish chunk, usage chunk with choices [], then [DONE]', async () => {
    const { post } = setup();
    const res = await post('/v1/chat/completions', body({ stream_options: { include_usage: true } }));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const text = await res.text();
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    const events = parseEvents(text);
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1) as Chunk[];
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(new Set(chunks.map((c) => c.created)).size).toBe(1);
    for (const c of chunks) {
      expect(c.object).toBe('chat.completion.chunk');
      expect(validateAgainst('CreateChatCompletionStreamResponse', c)).toEqual([]);
    }
    expect(chunks[0]!.choices[0]).toMatchObject({ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null });
    expect(chunks.slice(1, 4).map((c) => c.choices[0]!.delta.content)).toEqual(['Hello', ' world', '!']);
    expect(chunks[4]!.choices[0]).toMatchObject({ delta: {}, finish_reason: 'stop' });
    const last = chunks[5]!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ completion_tokens: 3, total_tokens: expect.any(Number) });
    expect(chunks).toHaveLength(6);
    for (const c of chunks.slice(0, -1)) expect(c.usage).toBeNull();
  });

  test('leaves usage out of every chunk when include_usage is not asked for', async () => {
    const { post } = setup();
    const chunks = (await readEvents(await post('/v1/chat/completions', body()))).slice(0, -1) as Chunk[];
    expect(chunks).toHaveLength(5);
    for (const c of chunks) expect('usage' in c).toBe(false);
  });

  test('sends the first content chunk while the stub engine is still generating', async () => {
    const { post, engine } = setup();
    engine.script = () => ({ tokens: ['Hello', ' world', ' again'], delayMs: 150 });
    const started = Date.now();
    const res = await post('/v1/chat/completions', body());
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let seen = '';
    while (!seen.includes('"content":"Hello"')) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += decoder.decode(value, { stream: true });
    }
    expect(seen).toContain('"content":"Hello"');
    expect(engine.finished.size).toBe(0);
    expect(Date.now() - started).toBeLessThan(400);
    await reader.cancel();
  });

  test('cancels the stub engine\'s generation when the consumer cancels the stream', async () => {
    const { post, engine, access } = setup();
    engine.script = () => ({ tokens: Array(50).fill(' tok'), delayMs: 20 });
    const res = await post('/v1/chat/completions', body());
    const reader = res.body!.getReader();
    await reader.read();
    await reader.cancel();
    await new Promise((r) => setTimeout(r, 100));
    expect(engine.cancelled).toEqual([engine.calls[0]!.id]);
    // The tokens produced before the cut are still recorded.
    expect(access.records).toHaveLength(1);
    expect(access.records[0]!.usage.completion_tokens).toBeGreaterThan(0);
    expect(access.records[0]!.usage.completion_tokens).toBeLessThan(50);
    expect(access.records[0]!.usage.prompt_tokens).toBeGreaterThan(0);
  });

  test('cancels every stub engine generation when the request signal aborts', async () => {
    const { post, engine } = setup();
    engine.script = () => ({ tokens: Array(50).fill(' tok'), delayMs: 20 });
    const ac = new AbortController();
    const res = await post('/v1/chat/completions', body({ n: 2 }), {}, ac.signal);
    const reader = res.body!.getReader();
    await reader.read();
    ac.abort();
    await new Promise((r) => setTimeout(r, 100));
    expect(engine.cancelled.sort()).toEqual(engine.calls.map((c) => c.id).sort());
  });

  test('cancels the stub engine\'s generation when a non-streamed request is aborted', async () => {
    const { post, engine } = setup();
    engine.script = () => ({ tokens: Array(50).fill(' tok'), delayMs: 20 });
    const ac = new AbortController();
    const pending = post('/v1/chat/completions', body({ stream: false }), {}, ac.signal);
    await new Promise((r) => setTimeout(r, 60));
    ac.abort();
    const res = await pending;
    expect(engine.cancelled).toEqual([engine.calls[0]!.id]);
    expect(await res.text()).toBe('');
  });

  test('streams two choices with their own indexes and finish chunks when n=2', async () => {
    const { post } = setup();
    const chunks = (await readEvents(await post('/v1/chat/completions', body({ n: 2 })))).slice(0, -1) as Chunk[];
    for (const i of [0, 1]) {
      const mine = chunks.filter((c) => c.choices[0]!.index === i);
      expect(mine[0]!.choices[0]!.delta.role).toBe('assistant');
      expect(mine.map((c) => c.choices[0]!.delta.content ?? '').join('')).toBe('Hello world!');
      expect(mine.at(-1)!.choices[0]!.finish_reason).toBe('stop');
    }
  });

  test('sends chat logprobs on each content chunk', async () => {
    const { post } = setup();
    const chunks = (await readEvents(await post('/v1/chat/completions', body({ logprobs: true, top_logprobs: 1 })))).slice(0, -1) as Chunk[];
    const content = chunks[1]!;
    expect(content.choices[0]!.logprobs).toMatchObject({ content: [{ token: 'Hello', logprob: -0.1, top_logprobs: [{ token: 'Hello' }] }], refusal: null });
    expect(validateAgainst('CreateChatCompletionStreamResponse', content)).toEqual([]);
  });

  test('answers an error the stub engine raises before the first token with a status, not a stream', async () => {
    const { post, engine } = setup();
    engine.script = () => ({ error: new EngineError('context_length_exceeded', 'too long', 'messages') });
    const res = await post('/v1/chat/completions', body());
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatchObject({ code: 'context_length_exceeded', param: 'messages' });
  });

  test('sends a fault after the first token as an error event and ends the stream without [DONE]', async () => {
    const { post, engine } = setup();
    engine.script = () => ({ failAfter: 1 });
    const res = await post('/v1/chat/completions', body());
    expect(res.status).toBe(200);
    const events = await readEvents(res);
    const last = events.at(-1) as { error: { type: string; message: string } };
    expect(events).not.toContain('[DONE]');
    expect(last.error.type).toBe('server_error');
    expect(last.error.message).toContain('/status');
    expect(last.error.message).not.toContain('secret');
    expect(validateAgainst('ErrorResponse', last)).toEqual([]);
  });
});
