// Structured outputs and tool calls in a real headless Chromium tab: XGrammar's WASM
// build runs in the engine's Web Worker, and the unmodified openai SDK in the page gets
// JSON that validates and tool calls with valid arguments (the fixture writes gibberish,
// so validity is the grammar's doing).
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, freshBrowser, inPage, openDemo, startDemo, type DemoServer } from './harness.js';

const suite = CHROMIUM ? describe : describe.skip;
const ajv = new Ajv({ strict: false });

const person = {
  type: 'object',
  properties: { name: { type: 'string', maxLength: 10 }, role: { enum: ['admin', 'user'] }, age: { type: 'integer', minimum: 0, maximum: 99 } },
  required: ['name', 'role', 'age'],
  additionalProperties: false,
};
const weather = {
  type: 'object',
  properties: { city: { type: 'string', maxLength: 12 }, unit: { enum: ['c', 'f'] } },
  required: ['city', 'unit'],
  additionalProperties: false,
};

let server: DemoServer;

beforeAll(async () => {
  if (CHROMIUM) server = await startDemo();
}, 180_000);

afterAll(async () => {
  await server?.close();
});

suite('structured outputs in the page on ?device=wasm', () => {
  const browser = freshBrowser();

  it('answers json_schema and tool calls, streamed or not, with valid output', async () => {
    const { page, info, errors } = await openDemo(browser.context, `${server.url}?device=wasm`);
    const r = await inPage(page, 'structuredFlow', info, person, weather);
    expect(r.json.finish).toBe('stop');
    expect(ajv.validate(person, JSON.parse(r.json.text!))).toBe(true);
    expect(r.call).toMatchObject({ name: 'get_weather', finish: 'tool_calls' });
    expect(ajv.validate(weather, JSON.parse(r.call.arguments!))).toBe(true);
    expect(r.stream).toMatchObject({ name: 'get_weather', finish: 'tool_calls' });
    expect(ajv.validate(weather, JSON.parse(r.stream.arguments))).toBe(true);
    expect(errors).toEqual([]);
  }, 240_000);
});
