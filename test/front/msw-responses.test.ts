// The Responses API through hearth/msw, as an application's test suite would call it:
// setupServer, an unmodified openai client on a made-up base URL, the in-memory store.
// create, stream, retrieve, input items and a continued conversation, each body
// validated against OpenAI's OpenAPI document; a stored response is its key's own.
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { useHearthMsw } from '../helpers/msw.js';
import { openapiAvailable, validateAgainst } from '../helpers/openapi.js';

const baseURL = 'https://api.example.test/v1';
useHearthMsw(baseURL);

const client = (apiKey = `svc_live_${'a1B2'.repeat(8)}`) => new OpenAI({ baseURL, apiKey, maxRetries: 0 });
const greedy = { model: 'svc/tiny-chat', temperature: 0, max_output_tokens: 16 } as const;

function expectValid(schema: string, body: unknown) {
  if (openapiAvailable) expect(validateAgainst(schema, body)).toEqual([]);
}

describe('the Responses API through the MSW handlers', () => {
  it('creates, streams and reads back responses in bodies that validate', async () => {
    const r = await client().responses.create({ ...greedy, input: 'Tell me about the sea.' });
    expectValid('Response', r);
    expect(r.output_text.length).toBeGreaterThan(0);

    const stream = client().responses.stream({ ...greedy, input: 'Tell me about the sea.' });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const e of stream) events.push(e);
    for (const e of events) expectValid('ResponseStreamEvent', e);
    const final = await stream.finalResponse();
    expect(final.output_text).toBe(r.output_text);

    const stored = await client().responses.retrieve(r.id);
    expectValid('Response', stored);
    expect(stored).toEqual(r);
    const raw = await client().responses.inputItems.list(r.id);
    expectValid('ResponseItemList', { object: 'list', data: raw.data, first_id: raw.data[0]!.id, last_id: raw.data.at(-1)!.id, has_more: raw.has_more });
    expect(raw.data).toMatchObject([{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Tell me about the sea.' }] }]);
  });

  it('continues a conversation from previous_response_id', async () => {
    const first = await client().responses.create({ ...greedy, input: 'Hello!' });
    const next = await client().responses.create({ ...greedy, previous_response_id: first.id, input: 'And the sea?' });
    expectValid('Response', next);
    const whole = await client().responses.create({
      ...greedy,
      store: false,
      input: [
        { role: 'user', content: 'Hello!' },
        { role: 'assistant', content: first.output_text },
        { role: 'user', content: 'And the sea?' },
      ],
    });
    expect(next.output_text).toBe(whole.output_text);
    expect(next.usage!.input_tokens_details.cached_tokens).toBeGreaterThan(0);
  });

  it('keeps a response its key’s own: another key finds nothing', async () => {
    const r = await client().responses.create({ ...greedy, input: 'Hello!' });
    const err = await client(`svc_live_${'Zz9y'.repeat(8)}`).responses.retrieve(r.id).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    await client().responses.delete(r.id);
    expect(await client().responses.retrieve(r.id).catch((e: unknown) => e)).toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('refuses a reply that cannot fit the context naming input and max_output_tokens, not chat fields', async () => {
    const err = await client().responses.create({ ...greedy, max_output_tokens: 2_040, input: 'Tell me about the sea.' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    const { error } = err as InstanceType<typeof OpenAI.BadRequestError>;
    expect(error).toMatchObject({ code: 'context_length_exceeded', param: 'input' });
    expect((error as { message: string }).message).toMatch(/max_output_tokens/);
    expect((error as { message: string }).message).not.toMatch(/max_tokens|messages/);
  });
});
