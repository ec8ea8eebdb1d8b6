// Structured outputs and tool calls over HTTP (the real server, the engine in its worker)
// with the openai SDK as users call it. The fixture writes gibberish, so every output that
// parses and validates is the grammar's doing: assertions check validity, never content.
import { Ajv } from 'ajv';
import OpenAI from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openapiAvailable, validateAgainst } from '../helpers/openapi.js';
import { startSdkServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
let client: OpenAI;
let key: string;
const ajv = new Ajv({ strict: false });

const weather = {
  type: 'object',
  properties: { city: { type: 'string', maxLength: 16 }, unit: { enum: ['c', 'f'] } },
  required: ['city', 'unit'],
  additionalProperties: false,
};
const tools: OpenAI.ChatCompletionTool[] = [
  { type: 'function', function: { name: 'get_weather', description: 'Weather in a city', parameters: weather } },
  { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: { zone: { type: 'string', maxLength: 8 } }, required: ['zone'] } } },
];
const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'What is the weather in Paris?' }];

beforeAll(async () => {
  ({ server, key, client } = await startSdkServer('hearth-structured-'));
}, 120_000);

afterAll(async () => {
  expect(await server?.stop()).toBe(0);
});

describe('structured outputs with the openai SDK over HTTP', () => {
  it('parses a reply into the zod schema it asked for with zodResponseFormat', async () => {
    const Person = z.object({ name: z.string().max(12), age: z.number().int().min(0).max(120), role: z.enum(['admin', 'user']) });
    const r = await client.chat.completions.parse({
      model: 'svc/tiny-chat',
      messages: [{ role: 'user', content: 'Describe someone.' }],
      response_format: zodResponseFormat(Person, 'person'),
      temperature: 0,
    });
    if (openapiAvailable) expect(validateAgainst('CreateChatCompletionResponse', r)).toEqual([]);
    expect(r.choices[0].finish_reason).toBe('stop');
    expect(Person.parse(r.choices[0].message.parsed)).toEqual(r.choices[0].message.parsed);
  });

  it('ends a schema cut short by max_tokens with finish_reason length', async () => {
    const r = await client.chat.completions.create({
      model: 'svc/tiny-chat',
      messages,
      response_format: { type: 'json_schema', json_schema: { name: 'w', schema: weather, strict: true } },
      max_tokens: 3,
      temperature: 0,
    });
    expect(r.choices[0].finish_reason).toBe('length');
    expect(r.usage!.completion_tokens).toBe(3);
  });

  it('refuses a schema the grammar engine cannot compile with a 400 naming response_format', async () => {
    const err = await client.chat.completions
      .create({ model: 'svc/tiny-chat', messages, response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'strange' } } } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    const e = err as InstanceType<typeof OpenAI.BadRequestError>;
    expect(e.param).toBe('response_format');
    expect(e.code).toBe('invalid_value');
    expect(e.message).toContain('strange');
  });
});

describe('tool calls with the openai SDK over HTTP', () => {
  it('returns calls of an offered tool with valid arguments when tool_choice is required', async () => {
    const r = await client.chat.completions.create({ model: 'svc/tiny-chat', messages, tools, tool_choice: 'required', temperature: 0 });
    if (openapiAvailable) expect(validateAgainst('CreateChatCompletionResponse', r)).toEqual([]);
    const choice = r.choices[0];
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.tool_calls!.length).toBeGreaterThan(0);
    for (const call of choice.message.tool_calls!) {
      if (call.type !== 'function') throw new Error('not a function call');
      expect(call.id).toMatch(/^call_/);
      const tool = tools.find((t) => t.type === 'function' && t.function.name === call.function.name);
      expect(tool).toBeDefined();
      expect(ajv.validate(tool!.type === 'function' ? tool!.function.parameters! : {}, JSON.parse(call.function.arguments))).toBe(true);
    }
  });

  it('calls the named function, once, with arguments valid for it', async () => {
    const r = await client.chat.completions.create({
      model: 'svc/tiny-chat', messages, tools, tool_choice: { type: 'function', function: { name: 'get_time' } }, temperature: 0,
    });
    const calls = r.choices[0].message.tool_calls!;
    expect(calls).toHaveLength(1);
    const call = calls[0]!;
    if (call.type !== 'function') throw new Error('not a function call');
    expect(call.function.name).toBe('get_time');
    expect(ajv.validate(tools[1]!.type === 'function' ? tools[1]!.function.parameters! : {}, JSON.parse(call.function.arguments))).toBe(true);
  });

  it('streams tool calls as OpenAI does: id, type and name first, then argument fragments', async () => {
    const stream = await client.chat.completions.create({
      model: 'svc/tiny-chat', messages, tools, tool_choice: { type: 'function', function: { name: 'get_weather' } }, temperature: 0, stream: true,
    });
    const deltas: OpenAI.ChatCompletionChunk.Choice.Delta.ToolCall[] = [];
    let finish: string | null = null;
    for await (const chunk of stream) {
      deltas.push(...(chunk.choices[0]?.delta.tool_calls ?? []));
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(finish).toBe('tool_calls');
    expect(deltas[0]).toMatchObject({ index: 0, type: 'function', function: { name: 'get_weather', arguments: '' } });
    expect(deltas[0]!.id).toMatch(/^call_/);
    expect(deltas.slice(1).every((d) => d.index === 0 && d.id === undefined && d.function?.name === undefined)).toBe(true);
    const args = deltas.map((d) => d.function?.arguments ?? '').join('');
    expect(ajv.validate(weather, JSON.parse(args))).toBe(true);
  });

  it('carries a conversation with an assistant tool call and its tool result', async () => {
    const r = await client.chat.completions.create({
      model: 'svc/tiny-chat',
      tools,
      temperature: 0,
      messages: [
        ...messages,
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris","unit":"c"}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: '21 degrees' }] },
      ],
    });
    expect(['stop', 'tool_calls', 'length']).toContain(r.choices[0].finish_reason);
    expect(r.usage!.prompt_tokens).toBeGreaterThan(0);
  });

  it('with tool_choice auto, leaves a model that opens no call to write plain content', async () => {
    const r = await client.chat.completions.create({ model: 'svc/tiny-chat', messages, tools, temperature: 0 });
    if (openapiAvailable) expect(validateAgainst('CreateChatCompletionResponse', r)).toEqual([]);
    expect(r.choices[0].finish_reason).toBe('stop');
    expect(r.choices[0].message.content!.length).toBeGreaterThan(0);
    expect(r.choices[0].message.tool_calls).toBeUndefined();
  });

  it('makes exactly one call when parallel_tool_calls is false', async () => {
    const r = await client.chat.completions.create({
      model: 'svc/tiny-chat', messages, tools, tool_choice: 'required', parallel_tool_calls: false, temperature: 1, seed: 5,
    });
    expect(r.choices[0].message.tool_calls).toHaveLength(1);
  });

  it('refuses parameters that are not an object schema, naming the tool', async () => {
    const bad = [{ type: 'function' as const, function: { name: 'f', parameters: { type: 'string' } } }];
    const err = await client.chat.completions.create({ model: 'svc/tiny-chat', messages, tools: bad }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('tools[0].function.parameters');
  });

  it('refuses tools on an embedding model with a 400, not a 500', async () => {
    const err = await client.chat.completions.create({ model: 'svc/tiny-embed', messages, tools }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('tools');
  });

  it('refuses a tool_choice naming a function that is not offered, naming tool_choice', async () => {
    const err = await client.chat.completions
      .create({ model: 'svc/tiny-chat', messages, tools, tool_choice: { type: 'function', function: { name: 'nope' } } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('tool_choice');
  });
});

describe('/generate with json_schema, regex and ebnf over HTTP', () => {
  const generate = (sampling_params: Record<string, unknown>) =>
    fetch(`${server.url}/generate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'Once upon a time', sampling_params: { temperature: 0, max_new_tokens: 120, ...sampling_params } }),
    });

  it('writes text that follows each kind of grammar', async () => {
    const schema = { type: 'object', properties: { n: { type: 'integer', minimum: 0, maximum: 999 }, ok: { type: 'boolean' } }, required: ['n', 'ok'] };
    const [a, b, c] = await Promise.all([
      generate({ json_schema: JSON.stringify(schema) }).then((r) => r.json()),
      generate({ regex: '(yes|no), [0-9]{2}' }).then((r) => r.json()),
      generate({ ebnf: 'root ::= "(" item ("," item)? ("," item)? ")"\nitem ::= [a-z] [a-z]? [a-z]?' }).then((r) => r.json()),
    ]);
    expect(ajv.validate(schema, JSON.parse(a.text[0]))).toBe(true);
    expect(b.text[0]).toMatch(/^(yes|no), [0-9]{2}$/);
    expect(c.text[0]).toMatch(/^\([a-z]{1,3}(,[a-z]{1,3}){0,2}\)$/);
  });

  it('refuses a grammar that does not parse with a 400 naming its field', async () => {
    const r = await generate({ ebnf: 'root ::= "a" |' });
    expect(r.status).toBe(400);
    const body = await r.json();
    expect(body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_value', param: 'sampling_params.ebnf' });
  });
});
