// Keys, limits, caps, charging and errors of the Messages routes on a real `hearth serve`, with
// Anthropic's SDK: the same keys as chat whether sent as x-api-key (on Anthropic's requests: the
// Messages routes, or any with anthropic-version) or as a bearer token; each
// refusal in Anthropic's envelope with its status, the SDK's error class and a request-id; a
// Messages conversation charged (through `hearth usage --json`) exactly as the same
// conversation on chat completions, its whole prompt counted; count_tokens not charged.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtures } from '../helpers/fixtures.js';
import { createKey, hearth, startServer, waitReady, type TestServer } from '../helpers/server.js';
import { GREEDY } from '../helpers/anthropic.js';

const MODEL = 'svc/tiny-chat';
const MAX_BODY = 16_384;
let server: TestServer;

beforeAll(async () => {
  await fixtures();
  server = await startServer(['--models', MODEL, '--sandbox-cap-usd', '0.00021', '--max-body-bytes', String(MAX_BODY)]);
  await waitReady(server.url);
}, 120_000);

afterAll(async () => {
  expect(await server?.stop()).toBe(0);
});

const sdk = (apiKey: string, maxRetries = 0) => new Anthropic({ baseURL: server.url, apiKey, maxRetries });
const hello: Anthropic.MessageParam[] = [{ role: 'user', content: 'Hello!' }];
const usageOf = async (name: string) =>
  (JSON.parse(await hearth(['usage', '--json', '--data-dir', server.dataDir])) as Array<Record<string, unknown>>).find((u) => u.name === name);

async function refusal(p: Promise<unknown>) {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(Anthropic.APIError);
  const e = err as InstanceType<typeof Anthropic.APIError>;
  expect(e.requestID).toMatch(/^req_/);
  return e as typeof e & { error: { type: string; error: { type: string; message: string } } };
}

describe('keys and refusals on the Messages routes', () => {
  it('takes the same key as x-api-key or as a bearer token, and refuses an unknown or revoked one with 401 authentication_error', async () => {
    const key = await createKey(server.dataDir, ['--name', 'both-headers']);
    const send = (headers: Record<string, string>) =>
      fetch(`${server.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...headers }, body: JSON.stringify({ model: MODEL, max_tokens: 4, messages: hello }) });
    expect((await send({ 'x-api-key': key })).status).toBe(200);
    expect((await send({ authorization: `Bearer ${key}` })).status).toBe(200);
    expect((await sdk(key).messages.countTokens({ model: MODEL, messages: hello })).input_tokens).toBeGreaterThan(0);

    const unknown = await refusal(sdk(`svc_live_${'Zz9'.repeat(12)}`).messages.create({ model: MODEL, max_tokens: 4, messages: hello }));
    expect(unknown).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(unknown.error).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    const noKey = await send({});
    expect([noKey.status, ((await noKey.json()) as { error: { type: string } }).error.type]).toEqual([401, 'authentication_error']);

    // On OpenAI's routes a key is read from Authorization only, as OpenAI reads it.
    expect((await fetch(`${server.url}/v1/models`, { headers: { 'x-api-key': key } })).status).toBe(401);
    expect((await fetch(`${server.url}/v1/models`, { headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01' } })).status).toBe(200);

    await hearth(['keys', 'revoke', key, '--data-dir', server.dataDir]);
    expect((await send({ 'x-api-key': key })).status).toBe(401);
  });

  it('refuses a wrong field with 400 invalid_request_error, an unknown model with 404 not_found_error, and a body over the limit with 413 request_too_large', async () => {
    const client = sdk(await createKey(server.dataDir, ['--name', 'refused']));
    const bad = await refusal(client.messages.create({ model: MODEL, max_tokens: 4, messages: hello, temperature: 3 } as Anthropic.MessageCreateParamsNonStreaming));
    expect(bad).toBeInstanceOf(Anthropic.BadRequestError);
    expect(bad.error.error).toMatchObject({ type: 'invalid_request_error', message: expect.stringContaining('temperature') });
    const image = await refusal(
      client.messages.create({ model: MODEL, max_tokens: 4, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } }] }] }),
    );
    expect(image.error.error).toMatchObject({ type: 'invalid_request_error', message: expect.stringMatching(/messages\[0\]\.content\[0\].*takes no images/) });
    const missing = await refusal(client.messages.create({ model: 'svc/nope', max_tokens: 4, messages: hello }));
    expect(missing).toBeInstanceOf(Anthropic.NotFoundError);
    expect(missing.error.error.type).toBe('not_found_error');
    const large = await refusal(client.messages.create({ model: MODEL, max_tokens: 4, messages: [{ role: 'user', content: 'x'.repeat(MAX_BODY) }] }));
    expect(large.status).toBe(413);
    expect(large.error.error.type).toBe('request_too_large');
    const context = await refusal(client.messages.create({ model: MODEL, max_tokens: 5000, messages: hello }));
    expect(context.error.error).toMatchObject({ type: 'invalid_request_error', message: expect.stringContaining('max_tokens') });
  });

  it('counts each request against the key’s rate limit and refuses past it with 429 rate_limit_error and retry-after', async () => {
    const key = await createKey(server.dataDir, ['--name', 'limited', '--rate-limit', '2']);
    const { response } = await sdk(key).messages.create({ model: MODEL, max_tokens: 4, messages: hello }).withResponse();
    expect([response.headers.get('x-ratelimit-limit-requests'), response.headers.get('x-ratelimit-remaining-requests')]).toEqual(['2', '1']);
    await sdk(key).messages.countTokens({ model: MODEL, messages: hello });
    const limited = await refusal(sdk(key).messages.create({ model: MODEL, max_tokens: 4, messages: hello }));
    expect(limited).toBeInstanceOf(Anthropic.RateLimitError);
    expect(limited.error.error.type).toBe('rate_limit_error');
    expect(limited.headers?.get('retry-after')).toBeTruthy();
  });

  it('refuses a request that could pass a sandbox account’s cap with 429 rate_limit_error, which the SDK does not retry', async () => {
    const key = await createKey(server.dataDir, ['--name', 'capped', '--sandbox', '--rate-limit', '100']);
    expect((await sdk(key).messages.create({ model: MODEL, max_tokens: 5, messages: [{ role: 'user', content: 'Spend a little' }] })).type).toBe('message');
    // max_tokens 1000 could cost 4e-4 USD at 0.4 per 1M output tokens: past what is left of 2.1e-4.
    const capped = await refusal(sdk(key, 2).messages.create({ model: MODEL, max_tokens: 1000, messages: hello }));
    expect(capped).toBeInstanceOf(Anthropic.RateLimitError);
    expect(capped.headers?.get('x-should-retry')).toBe('false');
    expect(capped.error.error).toMatchObject({ type: 'rate_limit_error', message: expect.stringContaining('quota') });
    // One attempt: 1 served + 1 refused, and this probe is the 3rd.
    const probe = await fetch(`${server.url}/v1/models`, { headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01' } });
    expect(((await probe.json()) as { data: { type: string }[] }).data[0]!.type).toBe('model');
    expect(probe.headers.get('x-ratelimit-remaining-requests')).toBe(String(100 - 3));
    expect(await usageOf('capped')).toMatchObject({ sandbox: true, requests: 1 });
  });
});

describe('charging on the Messages routes', () => {
  it('charges a conversation as chat charges the same one, the whole prompt counted with what the cache read, and count_tokens not at all', async () => {
    const system = `You keep a lighthouse, run ${Date.now()}; answer in few words. `.repeat(4);
    const questions = ['What do you see?', 'What do you hear?'];
    const anthropic = sdk(await createKey(server.dataDir, ['--name', 'via-messages']));
    const openai = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: await createKey(server.dataDir, ['--name', 'via-chat']), maxRetries: 0 });

    const created = await anthropic.messages.create({ model: MODEL, max_tokens: 12, ...GREEDY, system, messages: [{ role: 'user', content: questions[0]! }] });
    const streamed = await anthropic.messages.stream({ model: MODEL, max_tokens: 12, ...GREEDY, system, messages: [{ role: 'user', content: questions[1]! }] }).finalMessage();
    await anthropic.messages.countTokens({ model: MODEL, system, messages: [{ role: 'user', content: questions[0]! }] });
    expect(streamed.usage.cache_read_input_tokens).toBeGreaterThan(0);
    const chats = [];
    for (const q of questions) {
      chats.push(await openai.chat.completions.create({ model: MODEL, max_tokens: 12, temperature: 0, messages: [{ role: 'system', content: system }, { role: 'user', content: q }] }));
    }

    const mine = await usageOf('via-messages');
    const theirs = await usageOf('via-chat');
    const prompt = [created, streamed].reduce((n, m) => n + m.usage.input_tokens + m.usage.cache_read_input_tokens!, 0);
    const output = [created, streamed].reduce((n, m) => n + m.usage.output_tokens, 0);
    expect(mine).toMatchObject({ requests: 2, prompt_tokens: prompt, completion_tokens: output });
    expect(prompt).toBe(chats.reduce((n, r) => n + r.usage!.prompt_tokens, 0));
    expect(output).toBe(chats.reduce((n, r) => n + r.usage!.completion_tokens, 0));
    expect({ ...mine, name: undefined }).toEqual({ ...theirs, name: undefined });
    expect(mine!.spend_usd).toBeCloseTo((prompt * 0.1 + output * 0.4) / 1e6, 12);
  });
});
