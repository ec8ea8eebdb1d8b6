// The Messages API on an upstream model (a catalog entry forwarding to an OpenAI-speaking
// server; here a real Hearth on tiny-chat): the request translated onto the upstream's chat
// completions and answered in Anthropic's shapes under Hearth's id and the entry's model, the
// same text, tokens and tool arguments as the upstream's own chat answer; streams in Anthropic's
// order; the upstream's refusals in Anthropic's envelope; the front's keys and charges.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GREEDY } from '../helpers/anthropic.js';
import { fixtures } from '../helpers/fixtures.js';
import { createKey, hearth, startServer, waitReady, type TestServer } from '../helpers/server.js';
import { catalogUpstream, writeCatalog } from '../helpers/upstream.js';

const REMOTE = 'svc/remote-chat';
let upstream: TestServer;
let front: TestServer;
let direct: OpenAI;
let anthropic: Anthropic;
const hello: Anthropic.MessageParam[] = [{ role: 'user', content: 'Tell me about the sea.' }];

beforeAll(async () => {
  await fixtures();
  const upDir = await mkdtemp(join(tmpdir(), 'hearth-upstream-messages-'));
  const upstreamKey = await createKey(upDir, ['--name', 'front-server']);
  upstream = await startServer(['--models', 'svc/tiny-chat', '--rate-limit', '10000'], upDir);
  await waitReady(upstream.url);
  direct = new OpenAI({ baseURL: `${upstream.url}/v1`, apiKey: upstreamKey, maxRetries: 0 });

  const frontDir = await mkdtemp(join(tmpdir(), 'hearth-front-messages-'));
  const catalog = await writeCatalog(frontDir, [catalogUpstream(REMOTE, 'chat', [`${upstream.url}/v1`], 'svc/tiny-chat')]);
  const key = await createKey(frontDir, ['--name', 'via-front', '--rate-limit', '10000']);
  process.env.UPSTREAM_KEY = upstreamKey;
  front = await startServer(['--catalog', catalog, '--rate-limit', '10000'], frontDir);
  delete process.env.UPSTREAM_KEY;
  await waitReady(front.url);
  anthropic = new Anthropic({ baseURL: front.url, apiKey: key, maxRetries: 0 });
}, 180_000);

afterAll(async () => {
  const code = await front?.stop('SIGTERM');
  await upstream?.stop('SIGTERM');
  expect(code).toBe(0);
});

const directChat = (extra: Partial<OpenAI.ChatCompletionCreateParamsNonStreaming> = {}) =>
  direct.chat.completions.create({ model: 'svc/tiny-chat', temperature: 0, max_tokens: 24, messages: [{ role: 'user', content: 'Tell me about the sea.' }], ...extra });

describe('the Messages API on an upstream model', () => {
  it('answers with the upstream’s greedy chat text and token counts, under Hearth’s id and the entry’s model', async () => {
    const m = await anthropic.messages.create({ model: REMOTE, max_tokens: 24, ...GREEDY, messages: hello });
    const r = await directChat();
    expect(m).toMatchObject({ type: 'message', role: 'assistant', model: REMOTE, content: [{ type: 'text', text: r.choices[0]!.message.content }] });
    expect(m.id).toMatch(/^msg_/);
    expect(m.stop_reason).toBe(r.choices[0]!.finish_reason === 'length' ? 'max_tokens' : 'end_turn');
    expect([m.usage.input_tokens + m.usage.cache_read_input_tokens!, m.usage.output_tokens]).toEqual([r.usage!.prompt_tokens, r.usage!.completion_tokens]);
  });

  it('streams Anthropic’s events in order, the final message the created one with the upstream’s usage', async () => {
    const params = { model: REMOTE, max_tokens: 24, ...GREEDY, messages: hello };
    const created = await anthropic.messages.create(params);
    const names: string[] = [];
    const stream = anthropic.messages.stream(params);
    stream.on('streamEvent', (e) => names.push(e.type));
    const final = await stream.finalMessage();
    expect(names.join(' ')).toMatch(/^message_start (content_block_start (content_block_delta )*content_block_stop )+message_delta message_stop$/);
    expect(final.content).toEqual(created.content);
    expect(final.usage.input_tokens + final.usage.cache_read_input_tokens!).toBe(created.usage.input_tokens + created.usage.cache_read_input_tokens!);
    expect(final.usage.output_tokens).toBe(created.usage.output_tokens);
  });

  it('calls a tool with the upstream chat’s arguments for the same forced call, in replies and streams', async () => {
    const input_schema = { type: 'object' as const, properties: { city: { type: 'string', maxLength: 12 } }, required: ['city'] };
    const params = { model: REMOTE, max_tokens: 100, ...GREEDY, messages: hello, tools: [{ name: 'get_weather', input_schema }], tool_choice: { type: 'tool' as const, name: 'get_weather' } };
    const m = await anthropic.messages.create(params);
    const r = await directChat({ max_tokens: 100, tools: [{ type: 'function', function: { name: 'get_weather', parameters: input_schema } }], tool_choice: { type: 'function', function: { name: 'get_weather' } } });
    const call = r.choices[0]!.message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(m.stop_reason).toBe('tool_use');
    expect(m.content).toEqual([{ type: 'tool_use', id: expect.stringMatching(/^toolu_/), name: 'get_weather', input: JSON.parse(call.function.arguments) }]);
    const final = await anthropic.messages.stream(params).finalMessage();
    expect(final.content.map((b) => (b.type === 'tool_use' ? [b.name, b.input] : b.type))).toEqual([['get_weather', JSON.parse(call.function.arguments)]]);
    expect(final.stop_reason).toBe('tool_use');
  });

  it('answers the upstream’s refusal in Anthropic’s envelope', async () => {
    const err = await anthropic.messages.create({ model: REMOTE, max_tokens: 5000, messages: hello }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect((err as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('context') } });
  });

  it('charges the front’s account what the upstream reported', async () => {
    const before = (JSON.parse(await hearth(['usage', '--json', '--data-dir', front.dataDir])) as { name: string; prompt_tokens: number; completion_tokens: number; requests: number }[]).find((u) => u.name === 'via-front')!;
    const m = await anthropic.messages.create({ model: REMOTE, max_tokens: 8, ...GREEDY, messages: [{ role: 'user', content: 'Charge me.' }] });
    const after = (JSON.parse(await hearth(['usage', '--json', '--data-dir', front.dataDir])) as typeof before[]).find((u) => u.name === 'via-front')!;
    expect([after.requests - before.requests, after.prompt_tokens - before.prompt_tokens, after.completion_tokens - before.completion_tokens]).toEqual([
      1,
      m.usage.input_tokens + m.usage.cache_read_input_tokens!,
      m.usage.output_tokens,
    ]);
  });
});
