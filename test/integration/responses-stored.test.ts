// Stored responses through the openai SDK against a real server: a response (streamed or
// not) is kept with the conversation that led to it, read back, listed page by page and
// deleted by its own account only, and previous_response_id continues the conversation
// exactly as sending it whole would (instructions not carried over), its shared prefix
// answered from the prefix cache; and item_reference names an item of a stored response
// (an assistant message, a function call and its output) in place of sending it again.
import { createOpenAI } from '@ai-sdk/openai';
import { generateText } from 'ai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openapiAvailable, validateAgainst } from '../helpers/openapi.js';
import { createKey, startSdkServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
let client: OpenAI;
let key: string;
let other: OpenAI;

beforeAll(async () => {
  ({ server, client, key } = await startSdkServer('hearth-responses-stored-'));
  other = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: await createKey(server.dataDir, ['--name', 'someone-else']), maxRetries: 0 });
}, 120_000);

afterAll(async () => {
  expect(await server?.stop()).toBe(0);
});

function expectValid(schema: string, body: unknown) {
  if (openapiAvailable) expect(validateAgainst(schema, body)).toEqual([]);
}

const greedy = { model: 'svc/tiny-chat', temperature: 0, max_output_tokens: 24 } as const;

const status = (p: Promise<unknown>) => p.then(() => 200, (e: { status?: number }) => e.status);

describe('stored responses', () => {
  it('reads a response back as it was answered, and lists its input items as OpenAI does', async () => {
    const r = await client.responses.create({ ...greedy, input: [{ role: 'user', content: 'Hello!' }, { role: 'assistant', content: 'Hi.' }, { role: 'user', content: 'And the sea?' }] });
    expect(r).toMatchObject({ store: true });
    const again = await client.responses.retrieve(r.id);
    expectValid('Response', again);
    expect(again).toEqual(r);

    const raw = await (await fetch(`${server.url}/v1/responses/${r.id}/input_items`, { headers: { authorization: `Bearer ${client.apiKey}` } })).json();
    expectValid('ResponseItemList', raw);
    // Newest first by default, as OpenAI lists them.
    expect(raw).toMatchObject({ object: 'list', has_more: false });
    expect(raw.data.map((i: { role: string }) => i.role)).toEqual(['user', 'assistant', 'user']);
    expect(raw.data[0]).toMatchObject({ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'And the sea?' }] });
    expect(raw.data[1]).toMatchObject({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hi.' }] });
    expect(raw.first_id).toBe(raw.data[0].id);
    expect(raw.last_id).toBe(raw.data[2].id);

    // Page by page (limit 1, oldest first): the SDK follows `after` to the end.
    const paged: string[] = [];
    for await (const item of client.responses.inputItems.list(r.id, { limit: 1, order: 'asc' })) paged.push(item.id!);
    expect(paged).toEqual([...raw.data].reverse().map((i: { id: string }) => i.id));
    const page = await client.responses.inputItems.list(r.id, { limit: 2, order: 'asc' });
    expect(page.has_more).toBe(true);
    expect(page.data.map((i) => i.id)).toEqual(paged.slice(0, 2));
  });

  it('continues a conversation from previous_response_id as sending it whole does, without the earlier instructions, from the prefix cache', async () => {
    const first = await client.responses.create({ ...greedy, instructions: 'Answer briefly.', input: 'Tell me about the sea.' });
    const next = await client.responses.create({ ...greedy, previous_response_id: first.id, input: 'And the sky?' });
    const whole = await client.responses.create({
      ...greedy,
      store: false,
      input: [
        { role: 'user', content: 'Tell me about the sea.' },
        { role: 'assistant', content: first.output_text },
        { role: 'user', content: 'And the sky?' },
      ],
    });
    expectValid('Response', next);
    expect(next.previous_response_id).toBe(first.id);
    expect(next.instructions).toBeNull();
    expect(next.output_text).toBe(whole.output_text);
    expect(next.usage!.input_tokens).toBe(whole.usage!.input_tokens);
    expect(next.usage!.input_tokens_details.cached_tokens).toBeGreaterThan(0);

    const items = [];
    for await (const item of client.responses.inputItems.list(next.id, { order: 'asc' })) items.push(item);
    expect(items.map((i) => (i.type === 'message' ? `${i.role}:${i.content.map((c) => ('text' in c ? c.text : '')).join('')}` : i.type))).toEqual([
      'user:Tell me about the sea.',
      `assistant:${first.output_text}`,
      'user:And the sky?',
    ]);
    // The assistant item is the first response's own output message, id and all.
    expect(items[1]!.id).toBe(first.output[0]!.id);
  });

  it('continues after a function call with only the function output sent', async () => {
    const weather = {
      type: 'function' as const,
      name: 'get_weather',
      parameters: { type: 'object', properties: { city: { type: 'string', maxLength: 16 } }, required: ['city'], additionalProperties: false },
      strict: true,
    };
    const first = await client.responses.create({ ...greedy, max_output_tokens: 200, input: 'What is the weather in Paris?', tools: [weather], tool_choice: 'required' });
    const call = first.output.find((i) => i.type === 'function_call');
    if (call?.type !== 'function_call') throw new Error('no call');
    const next = await client.responses.create({
      ...greedy,
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: 'Sunny, 21 C' }],
      tools: [weather],
      tool_choice: 'none',
    });
    const whole = await client.responses.create({
      ...greedy,
      store: false,
      input: [
        { role: 'user', content: 'What is the weather in Paris?' },
        { type: 'function_call', call_id: call.call_id, name: call.name, arguments: call.arguments },
        { type: 'function_call_output', call_id: call.call_id, output: 'Sunny, 21 C' },
      ],
      tools: [weather],
      tool_choice: 'none',
    });
    expect(next.output_text).toBe(whole.output_text);
    expect(next.usage!.input_tokens).toBe(whole.usage!.input_tokens);
  });

  it('stores a stream’s final response before its last event, ready to continue from at once', async () => {
    const stream = client.responses.stream({ ...greedy, input: 'Tell me about the sea.' });
    let stored: OpenAI.Responses.Response | undefined;
    for await (const e of stream) {
      // Read back as soon as the last event arrives: it was stored before that event was sent.
      if (e.type === 'response.completed' || e.type === 'response.incomplete') stored = await client.responses.retrieve(e.response.id);
    }
    const final = await stream.finalResponse();
    expectValid('Response', stored);
    // The SDK's final response adds its parsed fields to what was sent.
    expect(final).toMatchObject(stored!);
    expect(stored!.output_text).toBe(final.output_text);
    const next = await client.responses.create({ ...greedy, previous_response_id: final.id, input: 'More?' });
    expect(next.status).not.toBe('failed');
  });

  it('keeps nothing with store: false', async () => {
    const r = await client.responses.create({ ...greedy, input: 'Hello!', store: false });
    expect(r).toMatchObject({ store: false });
    expect(await status(client.responses.retrieve(r.id))).toBe(404);
    const err = await client.responses.create({ ...greedy, previous_response_id: r.id, input: 'More?' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ code: 'previous_response_not_found', param: 'previous_response_id' });
  });

  it('belongs to its account: another account’s key finds nothing, and cannot delete or continue it', async () => {
    const r = await client.responses.create({ ...greedy, input: 'Hello!' });
    expect(await status(other.responses.retrieve(r.id))).toBe(404);
    expect(await status(other.responses.inputItems.list(r.id))).toBe(404);
    expect(await status(other.responses.delete(r.id))).toBe(404);
    expect(await status(other.responses.create({ ...greedy, previous_response_id: r.id, input: 'More?' }))).toBe(400);
    const miss = await fetch(`${server.url}/v1/responses/${r.id}`, { headers: { authorization: `Bearer ${other.apiKey}` } });
    expect(await miss.json()).toEqual({ error: { message: `Response with id '${r.id}' not found.`, type: 'invalid_request_error', param: null, code: 'response_not_found' } });
    expect((await client.responses.retrieve(r.id)).id).toBe(r.id);
  });

  it('deletes with OpenAI’s answer, once', async () => {
    const r = await client.responses.create({ ...greedy, input: 'Hello!' });
    const res = await fetch(`${server.url}/v1/responses/${r.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${client.apiKey}` } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: r.id, object: 'response', deleted: true });
    expect(await status(client.responses.retrieve(r.id))).toBe(404);
    expect(await status(client.responses.delete(r.id))).toBe(404);
  });

  it('refuses a page size or order OpenAI does not take', async () => {
    const r = await client.responses.create({ ...greedy, input: 'Hello!' });
    const err = await client.responses.inputItems.list(r.id, { limit: 101 }).catch((e: unknown) => e);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ param: 'limit' });
    const res = await fetch(`${server.url}/v1/responses/${r.id}/input_items?order=up`, { headers: { authorization: `Bearer ${client.apiKey}` } });
    expect(res.status).toBe(400);
  });
});

describe('item_reference', () => {
  const weather = {
    type: 'function' as const,
    name: 'get_weather',
    parameters: { type: 'object', properties: { city: { type: 'string', maxLength: 16 } }, required: ['city'], additionalProperties: false },
    strict: true,
  };
  const notFound = async (p: Promise<unknown>) => {
    const err = await p.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    return (err as InstanceType<typeof OpenAI.NotFoundError>).error;
  };

  it('expands a stored assistant message as if it were sent inline: the same greedy reply', async () => {
    const first = await client.responses.create({ ...greedy, input: 'Tell me about the sea.' });
    const message = first.output.find((i) => i.type === 'message')!;
    const byRef = await client.responses.create({
      ...greedy,
      input: [{ role: 'user', content: 'Tell me about the sea.' }, { type: 'item_reference', id: message.id }, { role: 'user', content: 'And the sky?' }],
    });
    const inline = await client.responses.create({
      ...greedy,
      store: false,
      input: [{ role: 'user', content: 'Tell me about the sea.' }, { role: 'assistant', content: first.output_text }, { role: 'user', content: 'And the sky?' }],
    });
    expectValid('Response', byRef);
    expect(byRef.output_text).toBe(inline.output_text);
    expect(byRef.usage!.input_tokens).toBe(inline.usage!.input_tokens);
    // Listed as the item it names, id and all. A reference may leave its type out, as OpenAI's schema allows.
    const items = [];
    for await (const item of client.responses.inputItems.list(byRef.id, { order: 'asc' })) items.push(item);
    expect(items[1]).toEqual(message);
    const untyped = await client.responses.create({ ...greedy, store: false, input: [{ role: 'user', content: 'Tell me about the sea.' }, { id: message.id }, { role: 'user', content: 'And the sky?' }] });
    expect(untyped.output_text).toBe(inline.output_text);
  });

  it('expands a function call and its output from earlier responses: the same greedy reply as sending them whole', async () => {
    const first = await client.responses.create({ ...greedy, max_output_tokens: 200, input: 'What is the weather in Paris?', tools: [weather], tool_choice: 'required' });
    const call = first.output.find((i) => i.type === 'function_call');
    if (call?.type !== 'function_call') throw new Error('no call');
    // The function's output is kept (with an id of its own) as an input item of the response that took it.
    const second = await client.responses.create({ ...greedy, previous_response_id: first.id, input: [{ type: 'function_call_output', call_id: call.call_id, output: 'Sunny, 21 C' }], tools: [weather] });
    const listed = [];
    for await (const item of client.responses.inputItems.list(second.id)) listed.push(item);
    const output = listed.find((i) => i.type === 'function_call_output')!;
    expect(output.id).toMatch(/^fco_/);

    const input = (refs: boolean): OpenAI.Responses.ResponseInput => [
      { role: 'user', content: 'What is the weather in Paris?' },
      refs ? { type: 'item_reference', id: call.id! } : { type: 'function_call', call_id: call.call_id, name: call.name, arguments: call.arguments },
      refs ? { type: 'item_reference', id: output.id! } : { type: 'function_call_output', call_id: call.call_id, output: 'Sunny, 21 C' },
    ];
    const byRef = await client.responses.create({ ...greedy, input: input(true), tools: [weather], tool_choice: 'none' });
    const whole = await client.responses.create({ ...greedy, store: false, input: input(false), tools: [weather], tool_choice: 'none' });
    expect(byRef.output_text.length).toBeGreaterThan(0);
    expect(byRef.output_text).toBe(whole.output_text);
    expect(byRef.usage!.input_tokens).toBe(whole.usage!.input_tokens);
    // Streamed, the same.
    const streamed = await client.responses.stream({ ...greedy, store: false, input: input(true), tools: [weather], tool_choice: 'none' }).finalResponse();
    expect(streamed.output_text).toBe(whole.output_text);
  });

  it("answers OpenAI's 404 naming `input` for an unknown id, another account's item, and an item whose responses were deleted", async () => {
    const r = await client.responses.create({ ...greedy, input: 'Hello!' });
    const id = r.output[0]!.id!;
    const ask = (c: OpenAI, ref: string, store = true) => c.responses.create({ ...greedy, store, input: [{ role: 'user', content: 'Hello!' }, { type: 'item_reference', id: ref }] });
    expect(await notFound(ask(client, 'msg_nothing'))).toMatchObject({ type: 'invalid_request_error', param: 'input', code: null, message: expect.stringContaining("Item with id 'msg_nothing' not found.") });
    expect(await notFound(ask(other, id))).toMatchObject({ type: 'invalid_request_error', param: 'input', message: expect.stringContaining(`Item with id '${id}' not found.`) });
    // Taken by a second response, the item is held by both: it goes with the last of them.
    const taken = await ask(client, id);
    expect(taken.output_text.length).toBeGreaterThan(0);
    await client.responses.delete(r.id);
    expect((await ask(client, id, false)).output_text).toBe(taken.output_text);
    await client.responses.delete(taken.id);
    expect(await notFound(ask(client, id))).toMatchObject({ param: 'input' });
  });

  it("carries the AI SDK's multi-turn chats, which send earlier replies as item_reference when storing", async () => {
    const model = createOpenAI({ baseURL: `${server.url}/v1`, apiKey: key })('svc/tiny-chat');
    const settings = { temperature: 0, maxOutputTokens: 24, maxRetries: 0 } as const;
    const first = await generateText({ model, prompt: 'Tell me about the sea.', ...settings });
    const sent: unknown[] = [];
    const watching = createOpenAI({
      baseURL: `${server.url}/v1`,
      apiKey: key,
      fetch: async (url, init) => {
        sent.push(JSON.parse(String(init?.body)));
        return fetch(url, init);
      },
    })('svc/tiny-chat');
    const messages = [{ role: 'user' as const, content: 'Tell me about the sea.' }, ...first.response.messages, { role: 'user' as const, content: 'And the sky?' }];
    const next = await generateText({ model: watching, messages, ...settings });
    expect(sent[0]).toMatchObject({ input: [{ role: 'user' }, { type: 'item_reference' }, { role: 'user' }] });
    const whole = await generateText({ model, messages, ...settings, providerOptions: { openai: { store: false } } });
    expect(next.text).toBe(whole.text);
  });
});
