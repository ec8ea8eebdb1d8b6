// chat_template_kwargs (vLLM's and SGLang's field): passed to the engine for the model's
// chat template (Qwen3's enable_thinking); anything but an object is a 400 naming it.
import { describe, expect, test } from 'vitest';
import { setup } from './harness.js';

const chat = (extra: Record<string, unknown> = {}) => ({ model: 'svc/tiny-chat', messages: [{ role: 'user', content: 'Hi' }], ...extra });

describe('chat_template_kwargs', () => {
  test('reach the engine with the messages', async () => {
    const { post, engine } = setup();
    const res = await post('/v1/chat/completions', chat({ chat_template_kwargs: { enable_thinking: false } }));
    expect(res.status).toBe(200);
    expect(engine.calls[0]!.prompt).toEqual({ messages: [{ role: 'user', content: 'Hi' }], template_kwargs: { enable_thinking: false } });
  });

  test('that are not an object are refused with the field named', async () => {
    const { post } = setup();
    const res = await post('/v1/chat/completions', chat({ chat_template_kwargs: 'enable_thinking=false' }));
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatchObject({ type: 'invalid_request_error', param: 'chat_template_kwargs' });
  });
});
