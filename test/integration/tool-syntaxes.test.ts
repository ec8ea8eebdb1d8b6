// Tool calls end to end (router, engine, onnxruntime) with the openai SDK, on export
// fixtures whose real chat templates use each syntax: Qwen3 (Hermes tags), Llama 3.2
// (JSON with "parameters"), Mistral Nemo ([TOOL_CALLS], a special token). The weights are
// random, so a call that parses and validates is the grammar's doing; assertions check
// validity and shape, never content.
import { Ajv } from 'ajv';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRouter } from '../../src/api/router.js';
import { nodeBackend } from '../../src/backends/node.js';
import { createEngine } from '../../src/engine/engine.js';
import type { CatalogEntry, EngineApi, ToolSyntax } from '../../src/engine/protocol.js';
import { GOOD_KEY, StubAccess } from '../api/stub-access.js';
import { exportFixtures } from '../helpers/exports.js';

const FIXTURES: [string, ToolSyntax][] = [
  ['qwen3-export', 'hermes'],
  ['llama3_2-export', 'llama3_json'],
  ['mistral-nemo-export', 'mistral'],
];
const ajv = new Ajv({ strict: false });
const weather = { type: 'object', properties: { city: { type: 'string', maxLength: 12 }, unit: { enum: ['c', 'f'] } }, required: ['city', 'unit'], additionalProperties: false };
const time = { type: 'object', properties: { zone: { type: 'string', maxLength: 6 } }, required: ['zone'], additionalProperties: false };
const tools: OpenAI.ChatCompletionTool[] = [
  { type: 'function', function: { name: 'get_weather', description: 'Weather in a city', parameters: weather } },
  { type: 'function', function: { name: 'get_time', parameters: time } },
];
const schemas: Record<string, object> = { get_weather: weather, get_time: time };
const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'What is the weather in Paris?' }];

let engine: EngineApi;
let client: OpenAI;

beforeAll(async () => {
  const dir = await exportFixtures();
  const catalog: CatalogEntry[] = FIXTURES.map(([name]) => ({
    id: `svc/${name}`,
    task: 'chat',
    class: 'tiny',
    context_length: 2048,
    source: join(dir, name),
    dtype: { cpu: 'fp32' },
    price: { input_per_1m: 0, output_per_1m: 0 },
  }));
  engine = createEngine(nodeBackend('cpu'), { kvCacheMb: 0 });
  await engine.load(catalog);
  for (let i = 0; i < 600 && (await engine.models()).some((m) => m.status === 'starting'); i++) await new Promise((r) => setTimeout(r, 50));
  const app = createRouter({ engine, access: new StubAccess(), catalog: () => catalog, close: async () => {} });
  client = new OpenAI({ baseURL: 'http://hearth.test/v1', apiKey: GOOD_KEY, maxRetries: 0, fetch: async (url: string | URL | Request, init?: RequestInit) => app.fetch(new Request(url, init)) });
}, 180_000);

afterAll(() => engine?.dispose());

function expectValidCalls(calls: { function: { name: string; arguments: string } }[] | undefined, names = Object.keys(schemas)) {
  expect(calls?.length).toBeGreaterThan(0);
  for (const c of calls!) {
    expect(names).toContain(c.function.name);
    expect(ajv.validate(schemas[c.function.name]!, JSON.parse(c.function.arguments))).toBe(true);
  }
}

for (const [name, syntax] of FIXTURES) {
  const model = `svc/${name}`;
  describe(`tool calls on ${name} (${syntax})`, () => {
    it('the model reports the syntax its template uses', async () => {
      expect((await engine.models()).find((m) => m.id === model)?.tool_syntax).toBe(syntax);
    });

    it('required: calls of offered tools with valid arguments, finish_reason tool_calls', async () => {
      const r = await client.chat.completions.create({ model, messages, tools, tool_choice: 'required', max_tokens: 120, temperature: 0 });
      expect(r.choices[0]!.finish_reason).toBe('tool_calls');
      expectValidCalls(r.choices[0]!.message.tool_calls as never);
      if (syntax === 'llama3_json') expect(r.choices[0]!.message.tool_calls).toHaveLength(1);
    });

    it('named: one call of that function', async () => {
      const r = await client.chat.completions.create({ model, messages, tools, tool_choice: { type: 'function', function: { name: 'get_time' } }, max_tokens: 120, temperature: 0 });
      expect(r.choices[0]!.message.tool_calls).toHaveLength(1);
      expectValidCalls(r.choices[0]!.message.tool_calls as never, ['get_time']);
    });

    it('auto: the reply is text without a call marker, or text and valid calls', async () => {
      const r = await client.chat.completions.create({ model, messages, tools, tool_choice: 'auto', max_tokens: 8, temperature: 1.5, seed: 7 });
      for (const c of r.choices) {
        if (c.finish_reason === 'tool_calls') expectValidCalls(c.message.tool_calls as never);
        else expect(c.message.tool_calls ?? []).toEqual([]);
        expect(c.message.content ?? '').not.toMatch(/<tool_call>|\[TOOL_CALLS\]|\{"name": "get_/);
      }
    });

    it('streamed: per call a first delta with id, type, name and empty arguments, then argument fragments', async () => {
      const stream = await client.chat.completions.create({ model, messages, tools, tool_choice: 'required', max_tokens: 120, temperature: 0, stream: true });
      const calls: { id: string; name: string; arguments: string }[] = [];
      let finish: string | null = null;
      for await (const chunk of stream) {
        const choice = chunk.choices[0];
        if (!choice) continue;
        finish = choice.finish_reason ?? finish;
        for (const d of choice.delta.tool_calls ?? []) {
          if (d.id) {
            expect(d).toMatchObject({ index: calls.length, type: 'function', function: { arguments: '' } });
            expect(d.id).toMatch(/^call_/);
            calls.push({ id: d.id, name: d.function!.name!, arguments: '' });
          } else {
            expect(Object.keys(d.function!)).toEqual(['arguments']);
            calls[d.index]!.arguments += d.function!.arguments;
          }
        }
      }
      expect(finish).toBe('tool_calls');
      expectValidCalls(calls.map((c) => ({ function: c })));
    });
  });
}

describe('tools with a response_format', () => {
  it('auto: the reply is a valid call, or content that is JSON of the schema', async () => {
    const answer = { type: 'object', properties: { say: { type: 'string', maxLength: 8 } }, required: ['say'], additionalProperties: false };
    const r = await client.chat.completions.create({
      model: 'svc/llama3_2-export',
      messages,
      tools,
      response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: answer, strict: true } },
      max_tokens: 60,
      temperature: 0,
    });
    const c = r.choices[0]!;
    if (c.finish_reason === 'tool_calls') expectValidCalls(c.message.tool_calls as never);
    else {
      expect(c.finish_reason).toBe('stop');
      expect(ajv.validate(answer, JSON.parse(c.message.content!))).toBe(true);
    }
  });
});

it("a conversation the model's template refuses (two calls in one Llama 3 turn) is a 400 naming messages", async () => {
  const call = (id: string) => ({ id, type: 'function' as const, function: { name: 'get_time', arguments: '{"zone":"UTC"}' } });
  const err = await client.chat.completions
    .create({ model: 'svc/llama3_2-export', tools, messages: [...messages, { role: 'assistant', content: null, tool_calls: [call('call_1'), call('call_2')] }] })
    .catch((e: unknown) => e);
  expect(err).toBeInstanceOf(OpenAI.BadRequestError);
  expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('messages');
  expect((err as Error).message).toContain('only supports single tool-calls');
});
