// The Responses API on upstream models, against a real Hearth as the upstream: sent to the
// upstream's own /v1/responses, or, for an upstream without one (a stand-in that answers
// 404 there and passes the rest on), translated onto its chat completions; either way the
// same Responses shapes (validated against OpenAI's OpenAPI document), Hearth's own ids,
// stored and continued in the front's store, under the front's keys, caps and charges.
import { execFile } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtures } from '../helpers/fixtures.js';
import { openapiAvailable, validateAgainst } from '../helpers/openapi.js';
import { createKey, startServer, waitReady, type TestServer } from '../helpers/server.js';
import { catalogUpstream, chatOnlyUpstream, writeCatalog } from '../helpers/upstream.js';
import { CLI } from '../helpers/cli.js';

const run = promisify(execFile);

let upstream: TestServer;
let front: TestServer;
let chatOnly: Awaited<ReturnType<typeof chatOnlyUpstream>>;
let key: string;
let sandboxed: string;
let direct: OpenAI;

const client = (k = key) => new OpenAI({ baseURL: `${front.url}/v1`, apiKey: k, maxRetries: 0 });
const greedy = { temperature: 0, max_output_tokens: 24 } as const;
const MODELS = { native: 'svc/remote-chat', translated: 'svc/chat-only' } as const;

function expectValid(schema: string, body: unknown) {
  if (openapiAvailable) expect(validateAgainst(schema, body)).toEqual([]);
}

async function usageOf(name: string) {
  const { stdout } = await run(process.execPath, [...CLI, 'usage', '--data-dir', front.dataDir, '--json']);
  return (JSON.parse(stdout) as { name: string; requests: number; prompt_tokens: number; completion_tokens: number }[]).find((a) => a.name === name);
}

beforeAll(async () => {
  await fixtures();
  const upDir = await mkdtemp(join(tmpdir(), 'hearth-upstream-responses-'));
  const upstreamKey = await createKey(upDir, ['--name', 'front-server']);
  upstream = await startServer(['--rate-limit', '10000'], upDir);
  await waitReady(upstream.url);
  direct = new OpenAI({ baseURL: `${upstream.url}/v1`, apiKey: upstreamKey, maxRetries: 0 });
  chatOnly = await chatOnlyUpstream(upstream.url);

  const frontDir = await mkdtemp(join(tmpdir(), 'hearth-front-responses-'));
  const catalog = await writeCatalog(frontDir, [
    catalogUpstream(MODELS.native, 'chat', [`${upstream.url}/v1`], 'svc/tiny-chat'),
    catalogUpstream(MODELS.translated, 'chat', [`${chatOnly.url}/v1`], 'svc/tiny-chat'),
  ]);
  key = await createKey(frontDir, ['--name', 'dev', '--rate-limit', '10000']);
  sandboxed = await createKey(frontDir, ['--name', 'sandboxed', '--sandbox']);
  process.env.UPSTREAM_KEY = upstreamKey;
  front = await startServer(['--catalog', catalog, '--rate-limit', '10000', '--sandbox-cap-usd', '0.00001'], frontDir);
  delete process.env.UPSTREAM_KEY;
  await waitReady(front.url);
}, 180_000);

afterAll(async () => {
  const code = await front?.stop('SIGTERM');
  await upstream?.stop('SIGTERM');
  await chatOnly?.close();
  expect(code).toBe(0);
});

describe('the Responses API on an upstream model', () => {
  it('answers from the upstream’s own /v1/responses as the upstream does, under Hearth’s id and model, and stores it', async () => {
    const own = await direct.responses.create({ model: 'svc/tiny-chat', input: 'Tell me about the sea.', ...greedy });
    const r = await client().responses.create({ model: MODELS.native, input: 'Tell me about the sea.', ...greedy });
    expectValid('Response', r);
    expect(r.model).toBe(MODELS.native);
    expect(r.id).toMatch(/^resp_/);
    expect(r.id).not.toBe(own.id);
    expect(r.output_text).toBe(own.output_text);
    expect(r.usage).toMatchObject({ input_tokens: own.usage!.input_tokens, output_tokens: own.usage!.output_tokens });
    expect(await client().responses.retrieve(r.id)).toEqual(r);
    // Hearth keeps it; the upstream was asked not to.
    expect(await direct.responses.retrieve(r.id).catch((e: { status: number }) => e.status)).toBe(404);
  });

  for (const [how, model] of Object.entries(MODELS)) {
    it(`streams named events that validate, ending in the stored response (${how})`, async () => {
      const whole = await client().responses.create({ model, input: 'Tell me about the sea.', ...greedy });
      const stream = client().responses.stream({ model, input: 'Tell me about the sea.', ...greedy });
      const events: OpenAI.Responses.ResponseStreamEvent[] = [];
      for await (const e of stream) events.push(e);
      for (const e of events) expectValid('ResponseStreamEvent', e);
      const final = await stream.finalResponse();
      expect(events.map((e) => e.type).slice(0, 2)).toEqual(['response.created', 'response.in_progress']);
      expect(events.at(-1)!.type).toBe(`response.${final.status}`);
      expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
      expect(events.filter((e) => e.type === 'response.output_text.delta').length).toBeGreaterThan(3);
      expect(final.output_text).toBe(whole.output_text);
      expect(final.model).toBe(model);
      expect(final).toMatchObject(await client().responses.retrieve(final.id));
    });

    it(`continues a conversation from previous_response_id as sending it whole does (${how})`, async () => {
      const first = await client().responses.create({ model, input: 'Tell me about the sea.', ...greedy });
      const next = await client().responses.create({ model, previous_response_id: first.id, input: 'And the sky?', ...greedy });
      const whole = await direct.responses.create({
        model: 'svc/tiny-chat',
        input: [
          { role: 'user', content: 'Tell me about the sea.' },
          { role: 'assistant', content: first.output_text },
          { role: 'user', content: 'And the sky?' },
        ],
        ...greedy,
      });
      expectValid('Response', next);
      expect(next.previous_response_id).toBe(first.id);
      expect(next.output_text).toBe(whole.output_text);
    });
  }

  it('translates onto chat completions for an upstream without /v1/responses, with the same answer', async () => {
    const native = await client().responses.create({ model: MODELS.native, instructions: 'Answer briefly.', input: 'Hello!', ...greedy });
    const sent = chatOnly.paths.length;
    const r = await client().responses.create({ model: MODELS.translated, instructions: 'Answer briefly.', input: 'Hello!', ...greedy });
    expectValid('Response', r);
    expect(r.model).toBe(MODELS.translated);
    expect(r.instructions).toBe('Answer briefly.');
    expect(r.output_text).toBe(native.output_text);
    expect(r.usage).toMatchObject({ input_tokens: native.usage!.input_tokens, output_tokens: native.usage!.output_tokens });
    // It found out once that there is no /responses there, and asks for chat completions since.
    expect(chatOnly.paths.filter((p) => p.endsWith('/responses'))).toHaveLength(1);
    expect(chatOnly.paths.slice(sent)).toEqual(['/v1/chat/completions']);
  });

  it('translates a function call and its follow-up', async () => {
    const weather = {
      type: 'function' as const,
      name: 'get_weather',
      parameters: { type: 'object', properties: { city: { type: 'string', maxLength: 16 } }, required: ['city'], additionalProperties: false },
      strict: true,
    };
    const first = await client().responses.create({ model: MODELS.translated, input: 'Weather in Paris?', tools: [weather], tool_choice: 'required', temperature: 0, max_output_tokens: 200 });
    expectValid('Response', first);
    const call = first.output.find((i) => i.type === 'function_call');
    if (call?.type !== 'function_call') throw new Error('no call');
    expect(call).toMatchObject({ name: 'get_weather', status: 'completed' });
    expect(JSON.parse(call.arguments)).toEqual({ city: expect.any(String) });
    const next = await client().responses.create({
      model: MODELS.translated,
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: 'Sunny' }],
      tools: [weather],
      tool_choice: 'none',
      ...greedy,
    });
    expect(next.output.map((i) => i.type)).toEqual(['message']);
  });

  it('charges the front account the upstream’s usage, and holds to the sandbox cap', async () => {
    for (const model of Object.values(MODELS)) {
      const before = (await usageOf('dev'))!;
      const r = await client().responses.create({ model, input: 'Hello!', ...greedy });
      const after = (await usageOf('dev'))!;
      expect(after.requests - before.requests).toBe(1);
      expect(after.prompt_tokens - before.prompt_tokens).toBe(r.usage!.input_tokens);
      expect(after.completion_tokens - before.completion_tokens).toBe(r.usage!.output_tokens);
    }
    const err = await client(sandboxed).responses.create({ model: MODELS.native, input: 'Hello!', max_output_tokens: 1000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect((err as InstanceType<typeof OpenAI.RateLimitError>).error).toMatchObject({ code: 'insufficient_quota' });
  });
});
