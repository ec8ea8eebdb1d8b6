import { describe, expect, test } from 'vitest';
import { validateAgainst } from '../helpers/openapi.js';
import { readEvents, setup } from './harness.js';

type Choice = { index: number; text: string; finish_reason: string | null; logprobs: unknown };

describe('POST /v1/completions with the stub engine', () => {
  test('answers a text_completion with the stub engine\'s text', async () => {
    const { post, engine } = setup();
    const body = await (await post('/v1/completions', { model: 'svc/tiny-chat', prompt: 'Once upon' })).json();
    expect(engine.calls[0]!.prompt).toEqual({ text: 'Once upon' });
    expect(body).toMatchObject({
      object: 'text_completion',
      model: 'svc/tiny-chat',
      choices: [{ index: 0, text: 'Hello world!', logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 },
    });
    expect(body.id).toMatch(/^cmpl-/);
    expect(validateAgainst('CreateCompletionResponse', body)).toEqual([]);
  });

  test('gives one choice per prompt × n in prompt-major order and counts each prompt once', async () => {
    const { post, engine } = setup();
    const body = await (await post('/v1/completions', { model: 'svc/tiny-chat', prompt: ['one', 'two three'], n: 2, seed: 5 })).json();
    expect(engine.calls.map((c) => [c.prompt, c.sampling.seed])).toEqual([
      [{ text: 'one' }, 5],
      [{ text: 'one' }, 6],
      [{ text: 'two three' }, 5],
      [{ text: 'two three' }, 6],
    ]);
    expect(body.choices.map((c: Choice) => c.index)).toEqual([0, 1, 2, 3]);
    expect(body.usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 12 });
  });

  test('takes token-array prompts', async () => {
    const { post, engine } = setup();
    await post('/v1/completions', { model: 'svc/tiny-chat', prompt: [1, 2, 3] });
    await post('/v1/completions', { model: 'svc/tiny-chat', prompt: [[1, 2], [3]] });
    expect(engine.calls.map((c) => c.prompt)).toEqual([{ tokens: [1, 2, 3] }, { tokens: [1, 2] }, { tokens: [3] }]);
  });

  test('echo prepends the prompt text', async () => {
    const { post } = setup();
    const body = await (await post('/v1/completions', { model: 'svc/tiny-chat', prompt: 'Say: ', echo: true })).json();
    expect(body.choices[0].text).toBe('Say: Hello world!');
  });

  test('returns the legacy logprobs arrays with text offsets past the echoed prompt', async () => {
    const { post, engine } = setup();
    const body = await (await post('/v1/completions', { model: 'svc/tiny-chat', prompt: 'Hi ', echo: true, logprobs: 2 })).json();
    expect(engine.calls[0]!.sampling.logprobs).toBe(2);
    expect(body.choices[0].logprobs).toEqual({
      tokens: ['Hello', ' world', '!'],
      token_logprobs: [-0.1, -0.1, -0.1],
      top_logprobs: [
        { Hello: -0.1, alt1: -3 },
        { ' world': -0.1, alt1: -3 },
        { '!': -0.1, alt1: -3 },
      ],
      text_offset: [3, 8, 14],
    });
    expect(validateAgainst('CreateCompletionResponse', body)).toEqual([]);
  });

  test('passes stop strings through and reports the stub engine\'s finish reason', async () => {
    const { post, engine } = setup();
    const body = await (await post('/v1/completions', { model: 'svc/tiny-chat', prompt: 'x', stop: '!' })).json();
    expect(engine.calls[0]!.sampling.stop).toEqual(['!']);
    expect(body.choices[0]).toMatchObject({ text: 'Hello world', finish_reason: 'stop' });
  });

  test('streams text_completion chunks, a finish chunk per choice, a usage chunk and [DONE]', async () => {
    const { post } = setup();
    const events = await readEvents(
      await post('/v1/completions', { model: 'svc/tiny-chat', prompt: 'x', stream: true, echo: true, stream_options: { include_usage: true } }),
    );
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1) as { object: string; choices: Choice[]; usage: unknown }[];
    for (const c of chunks) {
      expect(c.object).toBe('text_completion');
      // OpenAI streams finish_reason: null and usage: null on completion chunks, as we do,
      // but its schema (shared with the non-streamed body) allows neither null.
      const { usage, ...rest } = c;
      const comparable = { ...rest, ...(usage ? { usage } : {}), choices: c.choices.map((ch) => ({ ...ch, finish_reason: ch.finish_reason ?? 'stop' })) };
      expect(validateAgainst('CreateCompletionResponse', comparable)).toEqual([]);
    }
    expect(chunks.map((c) => c.choices[0]?.text)).toEqual(['x', 'Hello', ' world', '!', '', undefined]);
    expect(chunks[4]!.choices[0]!.finish_reason).toBe('stop');
    expect(chunks[5]).toMatchObject({ choices: [], usage: { completion_tokens: 3 } });
    for (const c of chunks.slice(0, -1)) expect(c.usage).toBeNull();
  });

  test('refuses an empty prompt array and an unknown model', async () => {
    const { post } = setup();
    const empty = await post('/v1/completions', { model: 'svc/tiny-chat', prompt: [] });
    expect(empty.status).toBe(400);
    expect((await empty.json()).error.param).toBe('prompt');
    expect((await post('/v1/completions', { model: 'svc/x', prompt: 'a' })).status).toBe(404);
  });
});
