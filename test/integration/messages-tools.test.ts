// Tool use through Anthropic's SDK against a real `hearth serve` on tiny-chat: tool_use blocks
// under the same grammar as chat tools, so each call's `input` is the chat call's arguments for
// the same conversation and tool choice (any ↔ required, tool ↔ a named function, none, auto),
// streamed as input_json_delta pieces; a tool_result turn answers as chat answers a tool message.
// The fixture writes gibberish, so what validates is the grammar's doing.
import Anthropic from '@anthropic-ai/sdk';
import { Ajv } from 'ajv';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSdkServer, type TestServer } from '../helpers/server.js';
import { GREEDY } from '../helpers/anthropic.js';

const MODEL = 'svc/tiny-chat';
let server: TestServer;
let openai: OpenAI;
let anthropic: Anthropic;
const ajv = new Ajv({ strict: false });

beforeAll(async () => {
  let key: string;
  ({ server, key, client: openai } = await startSdkServer('hearth-messages-tools-'));
  anthropic = new Anthropic({ baseURL: server.url, apiKey: key, maxRetries: 0 });
}, 120_000);

afterAll(async () => {
  expect(await server?.stop()).toBe(0);
});

const weather = { type: 'object' as const, properties: { city: { type: 'string', maxLength: 16 }, unit: { enum: ['c', 'f'] } }, required: ['city', 'unit'], additionalProperties: false };
const time = { type: 'object' as const, properties: { zone: { type: 'string', maxLength: 8 } }, required: ['zone'] };
const tools: Anthropic.Tool[] = [
  { name: 'get_weather', description: 'Weather in a city', input_schema: weather },
  { name: 'get_time', input_schema: time },
];
const chatTools: OpenAI.ChatCompletionTool[] = tools.map((t) => ({ type: 'function', function: { name: t.name, ...(t.description ? { description: t.description } : {}), parameters: t.input_schema } }));
const question = 'What is the weather in Paris?';

const create = (extra: Partial<Anthropic.MessageCreateParamsNonStreaming> = {}) =>
  anthropic.messages.create({ model: MODEL, max_tokens: 200, ...GREEDY, tools, messages: [{ role: 'user', content: question }], ...extra });
const chat = (extra: Partial<OpenAI.ChatCompletionCreateParamsNonStreaming> = {}) =>
  openai.chat.completions.create({ model: MODEL, max_tokens: 200, temperature: 0, tools: chatTools, messages: [{ role: 'user', content: question }], ...extra });

const uses = (m: Anthropic.Message) => m.content.flatMap((b) => (b.type === 'tool_use' ? [b] : []));
const callsOf = (r: OpenAI.ChatCompletion) => (r.choices[0]!.message.tool_calls ?? []).flatMap((c) => (c.type === 'function' ? [{ name: c.function.name, input: JSON.parse(c.function.arguments) as unknown }] : []));

describe('tool use through Anthropic’s SDK', () => {
  it('with tool_choice any, answers tool_use blocks whose input is chat’s required call, valid for the tool, and stop_reason tool_use', async () => {
    const m = await create({ tool_choice: { type: 'any' } });
    const r = await chat({ tool_choice: 'required' });
    expect(m.stop_reason).toBe('tool_use');
    const blocks = uses(m);
    expect(blocks.length).toBeGreaterThan(0);
    expect(blocks.map(({ name, input }) => ({ name, input }))).toEqual(callsOf(r));
    for (const b of blocks) {
      expect(b.id).toMatch(/^toolu_/);
      expect(ajv.validate(tools.find((t) => t.name === b.name)!.input_schema, b.input)).toBe(true);
    }
    expect(m.usage.output_tokens).toBe(r.usage!.completion_tokens);
  });

  it('with tool_choice tool, calls that tool once, as chat calls the named function', async () => {
    const m = await create({ tool_choice: { type: 'tool', name: 'get_time' } });
    const r = await chat({ tool_choice: { type: 'function', function: { name: 'get_time' } } });
    expect(uses(m).map(({ name, input }) => ({ name, input }))).toEqual(callsOf(r));
    expect(uses(m)).toHaveLength(1);
    expect(uses(m)[0]!.name).toBe('get_time');
  });

  it('with tool_choice none or auto, answers as chat does with the same choice', async () => {
    for (const [mine, theirs] of [
      [{ type: 'none' }, 'none'],
      [{ type: 'auto' }, 'auto'],
    ] as const) {
      const m = await create({ tool_choice: mine });
      const r = await chat({ tool_choice: theirs });
      const text = m.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
      expect(text, mine.type).toBe(r.choices[0]!.message.content ?? '');
      expect(uses(m).map(({ name, input }) => ({ name, input })), mine.type).toEqual(callsOf(r));
      if (mine.type === 'none') expect(uses(m)).toEqual([]);
    }
  });

  it('streams a tool_use block that opens with its id and name, then input_json_delta pieces joining to the created input', async () => {
    const params = { model: MODEL, max_tokens: 200, ...GREEDY, tools, tool_choice: { type: 'tool' as const, name: 'get_weather' }, messages: [{ role: 'user' as const, content: question }] };
    const created = await anthropic.messages.create(params);
    const events: Anthropic.RawMessageStreamEvent[] = [];
    for await (const e of await anthropic.messages.create({ ...params, stream: true })) events.push(e);
    const start = events.find((e) => e.type === 'content_block_start') as Anthropic.RawContentBlockStartEvent;
    expect(start.content_block).toMatchObject({ type: 'tool_use', name: 'get_weather', input: {} });
    expect((start.content_block as Anthropic.ToolUseBlock).id).toMatch(/^toolu_/);
    const pieces = events.flatMap((e) => (e.type === 'content_block_delta' && e.delta.type === 'input_json_delta' ? [e.delta.partial_json] : []));
    expect(pieces.length).toBeGreaterThan(3);
    expect(JSON.parse(pieces.join(''))).toEqual(uses(created)[0]!.input);
    expect((events.at(-2) as Anthropic.RawMessageDeltaEvent).delta.stop_reason).toBe('tool_use');

    const final = await anthropic.messages.stream(params).finalMessage();
    expect(uses(final).map(({ name, input }) => ({ name, input }))).toEqual(uses(created).map(({ name, input }) => ({ name, input })));
  });

  it('answers a tool_result turn as chat answers the same call and tool message', async () => {
    const input = { city: 'Paris', unit: 'c' };
    const m = await create({
      tool_choice: { type: 'none' },
      messages: [
        { role: 'user', content: question },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: '21 degrees' }] }] },
      ],
    });
    const r = await chat({
      tool_choice: 'none',
      messages: [
        { role: 'user', content: question },
        { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: JSON.stringify(input) } }] },
        { role: 'tool', tool_call_id: 'toolu_1', content: '21 degrees' },
      ],
    });
    expect(m.content).toEqual([{ type: 'text', text: r.choices[0]!.message.content }]);
    expect(m.usage.input_tokens + m.usage.cache_read_input_tokens!).toBe(r.usage!.prompt_tokens);
  });

  it('refuses a tool_choice naming a tool that is not offered, and a server tool, with 400 naming the field', async () => {
    const named = await create({ tool_choice: { type: 'tool', name: 'nope' } }).catch((e: unknown) => e);
    expect(named).toBeInstanceOf(Anthropic.BadRequestError);
    expect((named as InstanceType<typeof Anthropic.BadRequestError>).message).toContain('tool_choice');
    const server = await create({ tools: [{ type: 'web_search_20250305', name: 'web_search' }] }).catch((e: unknown) => e);
    expect(server).toBeInstanceOf(Anthropic.BadRequestError);
    expect((server as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('tools[0].type') } });
  });
});
