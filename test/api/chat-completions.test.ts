import { describe, expect, test } from 'vitest';
import { validateAgainst } from '../helpers/openapi.js';
import { setup } from './harness.js';

const chat = (extra: Record<string, unknown> = {}) => ({
  model: 'svc/tiny-chat',
  messages: [{ role: 'user', content: 'Say hello' }],
  ...extra,
});

describe('POST /v1/chat/completions with the stub engine', () => {
  test('answers with a chat.completion whose message is the stub engine\'s text', async () => {
    const { post } = setup();
    const res = await post('/v1/chat/completions', chat());
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    const body = await res.json();
    expect(body).toMatchObject({
      object: 'chat.completion',
      model: 'svc/tiny-chat',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello world!', refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: { completion_tokens: 3, prompt_tokens_details: { cached_tokens: 0 } },
    });
    expect(body.id).toMatch(/^chatcmpl-/);
    expect(body.usage.total_tokens).toBe(body.usage.prompt_tokens + body.usage.completion_tokens);
    expect(validateAgainst('CreateChatCompletionResponse', body)).toEqual([]);
  });

  test('passes the documented defaults to the stub engine when the body names none', async () => {
    const { post, engine } = setup();
    await post('/v1/chat/completions', chat());
    const s = engine.calls[0]!.sampling;
    expect(s).toMatchObject({ temperature: 0.7, top_p: 1, top_k: -1, min_p: 0, presence_penalty: 0, frequency_penalty: 0, stop: [], logprobs: -1 });
    expect(s.max_tokens).toBeUndefined();
    expect(s.seed).toBeUndefined();
  });

  test('passes sampling fields and stop strings through to the stub engine', async () => {
    const { post, engine } = setup();
    const res = await post(
      '/v1/chat/completions',
      chat({ temperature: 0, top_p: 0.5, max_tokens: 9, seed: 42, stop: [' world', '\n'], presence_penalty: 1, frequency_penalty: -1, user: 'u1', tools: [] }),
    );
    const body = await res.json();
    expect(engine.calls[0]!.sampling).toMatchObject({ temperature: 0, top_p: 0.5, max_tokens: 9, seed: 42, stop: [' world', '\n'], presence_penalty: 1, frequency_penalty: -1 });
    expect(body.choices[0].message.content).toBe('Hello');
    expect(body.choices[0].finish_reason).toBe('stop');
  });

  test('takes a single stop string and prefers max_completion_tokens over max_tokens', async () => {
    const { post, engine } = setup();
    await post('/v1/chat/completions', chat({ stop: '!', max_tokens: 5, max_completion_tokens: 7 }));
    expect(engine.calls[0]!.sampling.stop).toEqual(['!']);
    expect(engine.calls[0]!.sampling.max_tokens).toBe(7);
  });

  test('reports finish_reason length when the stub engine hits max_tokens', async () => {
    const { post } = setup();
    const body = await (await post('/v1/chat/completions', chat({ max_tokens: 2 }))).json();
    expect(body.choices[0]).toMatchObject({ message: { content: 'Hello world' }, finish_reason: 'length' });
  });

  test('n=2 runs two stub engine generations with seeds seed and seed+1 and counts the prompt once', async () => {
    const { post, engine } = setup();
    const body = await (await post('/v1/chat/completions', chat({ n: 2, seed: 10 }))).json();
    expect(engine.calls.map((c) => c.sampling.seed)).toEqual([10, 11]);
    expect(new Set(engine.calls.map((c) => c.id)).size).toBe(2);
    expect(body.choices.map((c: { index: number }) => c.index)).toEqual([0, 1]);
    expect(body.usage.completion_tokens).toBe(6);
    const single = await (await post('/v1/chat/completions', chat())).json();
    expect(body.usage.prompt_tokens).toBe(single.usage.prompt_tokens);
    expect(validateAgainst('CreateChatCompletionResponse', body)).toEqual([]);
  });

  test('joins text content parts and passes roles through to the stub engine', async () => {
    const { post, engine } = setup();
    const res = await post('/v1/chat/completions', {
      model: 'svc/tiny-chat',
      messages: [
        { role: 'developer', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'Hello ' }, { type: 'text', text: 'there' }] },
        { role: 'assistant', content: null },
      ],
    });
    expect(res.status).toBe(200);
    const prompt = engine.calls[0]!.prompt;
    expect(prompt).toEqual({
      messages: [
        { role: 'developer', content: 'Be brief.' },
        { role: 'user', content: 'Hello there' },
        { role: 'assistant', content: '' },
      ],
    });
  });

  test('refuses an image part sent to a text-only model with a 400 naming the part and saying the model takes no images', async () => {
    const { post, engine } = setup();
    const res = await post('/v1/chat/completions', {
      model: 'svc/tiny-chat',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'see' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' } }] }],
    });
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body.error).toMatchObject({ type: 'invalid_request_error', param: 'messages[0].content[1]' });
    expect(body.error.message).toMatch(/'svc\/tiny-chat' takes no images/);
    expect(engine.calls).toHaveLength(0);
  });

  test.each([
    [{ type: 'image_url', image_url: {} }, 'messages[0].content[0].image_url.url'],
    [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AA==', detail: 'huge' } }, 'messages[0].content[0].image_url.detail'],
    [{ type: 'image_url' }, 'messages[0].content[0].image_url'],
    [{ type: 'input_audio', input_audio: { data: 'AA==', format: 'wav' } }, 'messages[0].content[0].type'],
  ])('refuses a malformed or unsupported part %j with a 400 naming %s', async (part, param) => {
    const { post } = setup();
    const res = await post('/v1/chat/completions', { model: 'svc/tiny-chat', messages: [{ role: 'user', content: [part] }] });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatchObject({ type: 'invalid_request_error', param });
  });

  test('returns chat logprobs in OpenAI\'s shape from the stub engine\'s logprobs', async () => {
    const { post, engine } = setup();
    const body = await (await post('/v1/chat/completions', chat({ logprobs: true, top_logprobs: 2 }))).json();
    expect(engine.calls[0]!.sampling.logprobs).toBe(2);
    const lp = body.choices[0].logprobs;
    expect(lp.refusal).toBeNull();
    expect(lp.content).toHaveLength(3);
    expect(lp.content[0]).toEqual({
      token: 'Hello',
      logprob: -0.1,
      bytes: [72, 101, 108, 108, 111],
      top_logprobs: [
        { token: 'Hello', logprob: -0.1, bytes: [72, 101, 108, 108, 111] },
        { token: 'alt1', logprob: -3, bytes: [97, 108, 116, 49] },
      ],
    });
    expect(validateAgainst('CreateChatCompletionResponse', body)).toEqual([]);
  });

  test('asks the stub engine for logprobs without alternatives when only logprobs is true', async () => {
    const { post, engine } = setup();
    await post('/v1/chat/completions', chat({ logprobs: true }));
    expect(engine.calls[0]!.sampling.logprobs).toBe(0);
  });

  test('refuses top_logprobs without logprobs', async () => {
    const { post } = setup();
    const res = await post('/v1/chat/completions', chat({ top_logprobs: 2 }));
    expect(res.status).toBe(400);
    expect((await res.json()).error.param).toBe('top_logprobs');
  });

  test('records the request\'s tokens and cost with the access layer after the stub engine answers', async () => {
    const { post, access } = setup();
    const body = await (await post('/v1/chat/completions', chat())).json();
    expect(access.records).toHaveLength(1);
    const u = access.records[0]!.usage;
    expect(u).toMatchObject({ model: 'svc/tiny-chat', prompt_tokens: body.usage.prompt_tokens, completion_tokens: 3 });
    expect(u.cost_usd).toBeCloseTo((body.usage.prompt_tokens * 0.1 + 3 * 0.4) / 1e6, 12);
  });
});
