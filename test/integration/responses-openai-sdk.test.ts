// The Responses API through the openai SDK against a real server: responses.create,
// responses.stream, responses.parse with zodTextFormat, function tools with a follow-up
// turn, and the refusals; bodies and every streamed event validated against OpenAI's
// OpenAPI document. The reply is the chat completion's for the same conversation.
import OpenAI from 'openai';
import { zodTextFormat } from 'openai/helpers/zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openapiAvailable, validateAgainst } from '../helpers/openapi.js';
import { startSdkServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
let client: OpenAI;

beforeAll(async () => {
  ({ server, client } = await startSdkServer('hearth-responses-'));
}, 120_000);

afterAll(async () => {
  expect(await server?.stop()).toBe(0);
});

function expectValid(schema: string, body: unknown) {
  if (openapiAvailable) expect(validateAgainst(schema, body)).toEqual([]);
}

const chatOf = (messages: OpenAI.ChatCompletionMessageParam[], extra: Partial<OpenAI.ChatCompletionCreateParamsNonStreaming> = {}) =>
  client.chat.completions.create({ model: 'svc/tiny-chat', messages, temperature: 0, max_tokens: 24, ...extra });

const weather = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string', maxLength: 16 } }, required: ['city'], additionalProperties: false },
  strict: true,
};

describe('the Responses API through the openai SDK', () => {
  it('responses.create answers with the chat completion’s greedy text and usage, in a body that validates', async () => {
    const r = await client.responses.create({ model: 'svc/tiny-chat', input: 'Tell me about the sea.', temperature: 0, max_output_tokens: 24 });
    const chat = await chatOf([{ role: 'user', content: 'Tell me about the sea.' }]);
    expectValid('Response', r);
    expect(r).toMatchObject({ object: 'response', model: 'svc/tiny-chat', error: null, store: true, temperature: 0 });
    expect(r.id).toMatch(/^resp_/);
    expect(r.output[0]).toMatchObject({ type: 'message', role: 'assistant', content: [{ type: 'output_text', annotations: [] }] });
    expect(r.output[0]!.id).toMatch(/^msg_/);
    expect(r.output_text).toBe(chat.choices[0]!.message.content);
    expect(r.usage).toMatchObject({ input_tokens: chat.usage!.prompt_tokens, output_tokens: chat.usage!.completion_tokens, output_tokens_details: { reasoning_tokens: 0 } });
    expect(r.status).toBe(chat.choices[0]!.finish_reason === 'length' ? 'incomplete' : 'completed');
  });

  it('puts instructions first, as a system message, and reads message items', async () => {
    const r = await client.responses.create({
      model: 'svc/tiny-chat',
      instructions: 'Answer briefly.',
      input: [
        { role: 'user', content: [{ type: 'input_text', text: 'Hello!' }] },
        { role: 'assistant', content: 'Hi.' },
        { role: 'user', content: 'And the sea?' },
      ],
      temperature: 0,
      max_output_tokens: 24,
    });
    const chat = await chatOf([
      { role: 'system', content: 'Answer briefly.' },
      { role: 'user', content: 'Hello!' },
      { role: 'assistant', content: 'Hi.' },
      { role: 'user', content: 'And the sea?' },
    ]);
    expect(r.output_text).toBe(chat.choices[0]!.message.content);
    expect(r.usage!.input_tokens).toBe(chat.usage!.prompt_tokens);
    expect(r.instructions).toBe('Answer briefly.');
  });

  it('is incomplete, with the reason, when max_output_tokens cuts it', async () => {
    const r = await client.responses.create({ model: 'svc/tiny-chat', input: 'Hello!', temperature: 0, max_output_tokens: 2 });
    expectValid('Response', r);
    expect(r).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, usage: { output_tokens: 2 } });
  });

  it('responses.stream sends named events in order with increasing sequence numbers, deltas adding up to the final text', async () => {
    const stream = client.responses.stream({ model: 'svc/tiny-chat', input: 'Tell me about the sea.', temperature: 0, max_output_tokens: 24 });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const e of stream) events.push(e);
    const final = await stream.finalResponse();
    for (const e of events) expectValid('ResponseStreamEvent', e);
    const types = events.map((e) => e.type);
    expect(types.slice(0, 4)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added']);
    expect(types.slice(-4)).toEqual(['response.output_text.done', 'response.content_part.done', 'response.output_item.done', `response.${final.status}`]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const deltas = events.flatMap((e) => (e.type === 'response.output_text.delta' ? [e.delta] : []));
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.join('')).toBe(final.output_text);
    const created = await client.responses.create({ model: 'svc/tiny-chat', input: 'Tell me about the sea.', temperature: 0, max_output_tokens: 24 });
    expect(final.output_text).toBe(created.output_text);
  });

  it('sends no [DONE] and names every event in the raw stream', async () => {
    const res = await fetch(`${server.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${client.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'svc/tiny-chat', input: 'Hello!', stream: true, temperature: 0, max_output_tokens: 8 }),
    });
    const text = await res.text();
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(text).not.toContain('[DONE]');
    const frames = text.split('\n\n').filter(Boolean);
    for (const f of frames) {
      const [event, data] = f.split('\n');
      expect(event).toMatch(/^event: response\./);
      expect(JSON.parse(data!.slice('data: '.length)).type).toBe(event!.slice('event: '.length));
    }
  });

  it('responses.parse with zodTextFormat returns a parsed object that fits the schema', async () => {
    const Person = z.object({ name: z.string().max(12), age: z.number().int().min(0).max(120) });
    const r = await client.responses.parse({
      model: 'svc/tiny-chat',
      input: 'Describe someone.',
      temperature: 0,
      max_output_tokens: 200,
      text: { format: zodTextFormat(Person, 'person') },
    });
    expect(r.status).toBe('completed');
    expect(Person.parse(r.output_parsed)).toEqual(r.output_parsed);
    expect(r.text?.format).toMatchObject({ type: 'json_schema', name: 'person' });
  });

  it('calls a function tool, then answers after its output comes back', async () => {
    const first = await client.responses.create({
      model: 'svc/tiny-chat',
      input: 'What is the weather in Paris?',
      tools: [weather],
      tool_choice: 'required',
      temperature: 0,
      max_output_tokens: 200,
    });
    expectValid('Response', first);
    const call = first.output.find((i) => i.type === 'function_call');
    expect(call).toMatchObject({ type: 'function_call', name: 'get_weather', status: 'completed' });
    if (call?.type !== 'function_call') throw new Error('no call');
    expect(call.id).toMatch(/^fc_/);
    expect(call.call_id).toMatch(/^call_/);
    expect(JSON.parse(call.arguments)).toEqual({ city: expect.any(String) });

    const second = await client.responses.create({
      model: 'svc/tiny-chat',
      input: [
        { role: 'user', content: 'What is the weather in Paris?' },
        { type: 'function_call', call_id: call.call_id, name: call.name, arguments: call.arguments },
        { type: 'function_call_output', call_id: call.call_id, output: 'Sunny, 21 C' },
      ],
      tools: [weather],
      tool_choice: 'none',
      temperature: 0,
      max_output_tokens: 24,
    });
    expectValid('Response', second);
    expect(second.output.map((i) => i.type)).toEqual(['message']);
    expect(second.usage!.input_tokens).toBeGreaterThan(first.usage!.input_tokens);
  });

  it('streams a function call as an item with argument deltas', async () => {
    const stream = client.responses.stream({ model: 'svc/tiny-chat', input: 'Weather in Oslo?', tools: [weather], tool_choice: 'required', temperature: 0, max_output_tokens: 64 });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const e of stream) events.push(e);
    for (const e of events) expectValid('ResponseStreamEvent', e);
    const added = events.find((e) => e.type === 'response.output_item.added' && e.item.type === 'function_call');
    const deltas = events.flatMap((e) => (e.type === 'response.function_call_arguments.delta' ? [e.delta] : []));
    const done = events.find((e) => e.type === 'response.function_call_arguments.done');
    expect(added).toBeDefined();
    expect(done).toMatchObject({ name: 'get_weather' });
    if (done?.type !== 'response.function_call_arguments.done') throw new Error('no arguments');
    expect(deltas.join('')).toBe(done.arguments);
    expect(JSON.parse(done.arguments)).toEqual({ city: expect.any(String) });
  });

  it('refuses a built-in tool with a 400 naming it', async () => {
    const err = await client.responses.create({ model: 'svc/tiny-chat', input: 'Hi', tools: [{ type: 'web_search' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ type: 'invalid_request_error', param: 'tools[0].type' });
    expect((err as Error).message).toContain("'web_search'");
  });

  it('refuses a missing model and a bad key as chat completions do', async () => {
    const missing = await client.responses.create({ input: 'Hi' } as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(OpenAI.BadRequestError);
    const bad = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'nope', maxRetries: 0 });
    expect(await bad.responses.create({ model: 'svc/tiny-chat', input: 'Hi' }).catch((e: unknown) => e)).toBeInstanceOf(OpenAI.AuthenticationError);
  });
});
