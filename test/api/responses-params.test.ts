// /v1/responses runs as a chat body, but its errors name the fields its client sent:
// `text.format` (not response_format), `tools[i].parameters` (not tools[i].function.parameters),
// `input` and `instructions` (not messages), `max_output_tokens` (not max_tokens). Through the
// openai SDK, as a client reads them; chat completions keeps its own names for the same faults.
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { EngineError } from '../../src/engine/errors.js';
import { setup } from './harness.js';
import { GOOD_KEY } from './stub-access.js';

const CHAT_NAMES = /response_format|max_tokens|max_completion_tokens|reasoning_effort|\.function\b|messages\[/;

function client(s: ReturnType<typeof setup>) {
  return new OpenAI({ apiKey: GOOD_KEY, baseURL: 'http://hearth.test/v1', maxRetries: 0, fetch: async (url, init) => s.app.fetch(new Request(url, init)) });
}

/** The 400 a request gets, its message checked for chat-only names. */
async function refusal(p: Promise<unknown>): Promise<{ param: string | null; message: string }> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OpenAI.BadRequestError);
  const { param, message } = (err as InstanceType<typeof OpenAI.BadRequestError>).error as { param: string | null; message: string };
  expect(message).not.toMatch(CHAT_NAMES);
  return { param, message };
}

const unresolvable = { type: 'object', properties: { city: { $ref: '#/$defs/nowhere' } } };
const base = { model: 'svc/tiny-chat', input: 'Where is it?' };

describe('the errors /v1/responses answers', () => {
  it('name text.format for a schema in text.format that cannot be used, where chat names response_format', async () => {
    const s = setup();
    const asked = { ...base, text: { format: { type: 'json_schema' as const, name: 'place', schema: unresolvable } } };
    expect(await refusal(client(s).responses.create(asked))).toMatchObject({ param: 'text.format', message: expect.stringContaining("'text.format'") });

    const big = { type: 'object', properties: { n: { enum: Array.from({ length: 2_000 }, (_, i) => i) } } };
    expect((await refusal(client(s).responses.create({ ...asked, text: { format: { type: 'json_schema', name: 'place', schema: big } } }))).param).toBe('text.format');

    const chat = client(s).chat.completions.create({
      model: 'svc/tiny-chat',
      messages: [{ role: 'user', content: 'Where is it?' }],
      response_format: { type: 'json_schema', json_schema: { name: 'place', schema: unresolvable } },
    });
    await expect(chat).rejects.toMatchObject({ error: { param: 'response_format' } });
  });

  it('name tools[i].parameters for a function whose parameters cannot be used', async () => {
    const s = setup();
    const tool = (parameters: Record<string, unknown>) => [{ type: 'function' as const, name: 'locate', parameters, strict: false }];
    expect((await refusal(client(s).responses.create({ ...base, tools: tool({ type: 'string' }) }))).param).toBe('tools[0].parameters');
    expect((await refusal(client(s).responses.create({ ...base, tools: tool(unresolvable) }))).param).toBe('tools[0].parameters');
  });

  it('name input for what the chat body refuses in a message made from an input item', async () => {
    const s = setup();
    const input = [
      { type: 'function_call' as const, call_id: 'call_1', name: 'locate', arguments: 'not json' },
      { type: 'function_call_output' as const, call_id: 'call_1', output: 'Paris' },
    ];
    expect((await refusal(client(s).responses.create({ ...base, instructions: 'Be brief.', input }))).param).toBe('input');
  });

  it('name input and max_output_tokens where the engine names messages and max_tokens', async () => {
    const s = setup();
    // The engine's own words for a prompt and a completion that do not fit the context.
    const message = "This model's maximum context length is 2048 tokens. However, you requested 2100 tokens (100 in the prompt, 2000 for the completion). Please reduce the prompt or max_tokens.";
    s.engine.script = () => ({ error: new EngineError('context_length_exceeded', message, 'messages') });
    const r = await refusal(client(s).responses.create({ ...base, max_output_tokens: 2_000 }));
    expect(r).toEqual({ param: 'input', message: message.replace('max_tokens', 'max_output_tokens') });
  });
});
