// A reasoning model through the Responses API (hearth serve, the designed Qwen3 fixture):
// the thinking is a `reasoning` item with `reasoning_text` before the message, streams send
// response.reasoning_text.delta … .done inside its item, usage counts reasoning_tokens, and
// reasoning.effort "none" turns the thinking off. Bodies and events validate against OpenAI's
// OpenAPI document.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { THINKING_REPLY } from '../../models/exports/thinking.js';
import { exportFixtures } from '../helpers/exports.js';
import { openapiAvailable, validateAgainst } from '../helpers/openapi.js';
import { createKey, startServer, waitReady, type TestServer } from '../helpers/server.js';

const THINK = 'svc/qwen3-think-export';
const THINKING = THINKING_REPLY.thinking.trim();
const ANSWER = THINKING_REPLY.answer;

let server: TestServer;
let client: OpenAI;

beforeAll(async () => {
  const dir = await exportFixtures();
  const dataDir = await mkdtemp(join(tmpdir(), 'hearth-responses-reasoning-'));
  const key = await createKey(dataDir);
  server = await startServer(['--models', join(dir, 'qwen3-think-export')], dataDir);
  await waitReady(server.url);
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: key, maxRetries: 0 });
}, 120_000);

afterAll(async () => {
  expect(await server?.stop()).toBe(0);
});

function expectValid(schema: string, body: unknown) {
  if (openapiAvailable) expect(validateAgainst(schema, body)).toEqual([]);
}

describe('a reasoning model through the Responses API', () => {
  it('puts the thinking in a reasoning item before the message and counts its tokens', async () => {
    const r = await client.responses.create({ model: THINK, input: 'Hello there', temperature: 0 });
    expectValid('Response', r);
    expect(r.output.map((i) => i.type)).toEqual(['reasoning', 'message']);
    const [reasoning] = r.output;
    if (reasoning?.type !== 'reasoning') throw new Error('no reasoning item');
    expect(reasoning.id).toMatch(/^rs_/);
    expect(reasoning.content).toEqual([{ type: 'reasoning_text', text: THINKING }]);
    expect(r.output_text).toBe(ANSWER);
    expect(r.usage!.output_tokens_details.reasoning_tokens).toBe(15);
  });

  it('streams the thinking as reasoning_text deltas inside its item, then the answer', async () => {
    const stream = client.responses.stream({ model: THINK, input: 'Hello there', temperature: 0 });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const e of stream) events.push(e);
    for (const e of events) expectValid('ResponseStreamEvent', e);
    const types = events.map((e) => e.type);
    const firstReasoning = types.indexOf('response.reasoning_text.delta');
    const reasoningDone = types.indexOf('response.reasoning_text.done');
    const firstText = types.indexOf('response.output_text.delta');
    expect(types[2]).toBe('response.output_item.added');
    expect(firstReasoning).toBeGreaterThan(2);
    expect(reasoningDone).toBeGreaterThan(firstReasoning);
    expect(firstText).toBeGreaterThan(reasoningDone);
    const thought = events.flatMap((e) => (e.type === 'response.reasoning_text.delta' ? [e.delta] : [])).join('');
    const said = events.flatMap((e) => (e.type === 'response.output_text.delta' ? [e.delta] : [])).join('');
    expect([thought.trim(), said]).toEqual([THINKING, ANSWER]);
    expect((await stream.finalResponse()).usage!.output_tokens_details.reasoning_tokens).toBe(15);
  });

  it('answers without thinking when reasoning.effort is none', async () => {
    const r = await client.responses.create({ model: THINK, input: 'Hello there', temperature: 0, reasoning: { effort: 'none' } });
    expectValid('Response', r);
    expect(r.output.map((i) => i.type)).toEqual(['message']);
    expect(r.output_text).toBe(ANSWER);
    expect(r.usage!.output_tokens_details.reasoning_tokens).toBe(0);
    expect(r.reasoning).toMatchObject({ effort: 'none' });
  });

  it('takes a reasoning item sent back in the next turn, as the Agents SDK sends it', async () => {
    const first = await client.responses.create({ model: THINK, input: 'Hello there', temperature: 0, store: false });
    const next = await client.responses.create({
      model: THINK,
      input: [{ role: 'user', content: 'Hello there' }, ...(first.output as OpenAI.Responses.ResponseInputItem[]), { role: 'user', content: 'And again?' }],
      temperature: 0,
      store: false,
    });
    expect(next.status).toBe('completed');
    expect(next.output_text).toBe(ANSWER);
  });
});
