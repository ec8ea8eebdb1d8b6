// Stored responses through the openai SDK against a real server: a response (streamed or
// not) is kept with the conversation that led to it, read back, listed page by page and
// deleted by its own account only, and previous_response_id continues the conversation
// exactly as sending it whole would (instructions not carried over), its shared prefix
// answered from the prefix cache.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openapiAvailable, validateAgainst } from '../helpers/openapi.js';
import { createKey, startSdkServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
let client: OpenAI;
let other: OpenAI;

beforeAll(async () => {
  ({ server, client } = await startSdkServer('hearth-responses-stored-'));
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
