// What a chat request says about thinking, as it reaches the engine (the stub engine, the
// router's only fake engine, records it): reasoning_effort "none" or "minimal" switches
// thinking off through the template's enable_thinking, a request's own chat_template_kwargs
// win, and an assistant turn's reasoning_content (or `reasoning`, vLLM's name for it now) is
// given to the template.
import { describe, expect, test } from 'vitest';
import { setup } from '../harness.js';

const chat = (extra: Record<string, unknown> = {}) => ({ model: 'svc/tiny-chat', messages: [{ role: 'user', content: 'Hi' }], ...extra });

describe('thinking controls on chat requests (stub engine)', () => {
  test('turns thinking off for reasoning_effort none or minimal, unless chat_template_kwargs says otherwise', async () => {
    const { post, engine } = setup();
    for (const effort of ['none', 'minimal', 'high']) await post('/v1/chat/completions', chat({ reasoning_effort: effort }));
    await post('/v1/chat/completions', chat({ reasoning_effort: 'none', chat_template_kwargs: { enable_thinking: true } }));
    const kwargs = engine.calls.map((c) => ('messages' in c.prompt ? (c.prompt.template_kwargs ?? null) : undefined));
    expect(kwargs).toEqual([{ enable_thinking: false }, { enable_thinking: false }, null, { enable_thinking: true }]);
    const bad = await post('/v1/chat/completions', chat({ reasoning_effort: 'extreme' }));
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.param).toBe('reasoning_effort');
  });

  test('takes assistant messages sent back with their reasoning_content to the template', async () => {
    const { post, engine } = setup();
    const messages = [
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hi!', reasoning_content: 'Let me think.' },
      { role: 'user', content: 'Again' },
    ];
    expect((await post('/v1/chat/completions', chat({ messages }))).status).toBe(200);
    const sent = engine.calls[0]!.prompt;
    expect('messages' in sent && sent.messages[1]).toEqual({ role: 'assistant', content: 'Hi!', reasoning_content: 'Let me think.' });
  });

  test('takes assistant messages sent back with reasoning, vLLM\'s name, to the template as reasoning_content', async () => {
    const { post, engine } = setup();
    const turns = (assistant: Record<string, unknown>) => [
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hi!', ...assistant },
      { role: 'user', content: 'Again' },
    ];
    expect((await post('/v1/chat/completions', chat({ messages: turns({ reasoning: 'Let me think.' }) }))).status).toBe(200);
    expect((await post('/v1/chat/completions', chat({ messages: turns({ reasoning: 'Same.', reasoning_content: 'Same.' }) }))).status).toBe(200);
    const sent = engine.calls.map((c) => ('messages' in c.prompt ? c.prompt.messages[1] : undefined));
    expect(sent).toEqual([
      { role: 'assistant', content: 'Hi!', reasoning_content: 'Let me think.' },
      { role: 'assistant', content: 'Hi!', reasoning_content: 'Same.' },
    ]);
    const bad = await post('/v1/chat/completions', chat({ messages: turns({ reasoning: 42 }) }));
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.param).toBe('messages[1].reasoning');
  });
});
