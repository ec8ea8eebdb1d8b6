// Every error type of the Messages contract from the router over the stub engine, in Anthropic's
// envelope ({type: "error", error: {type, message}}) with its status and a request-id header:
// those the real server raises are also tested over `hearth serve` (test/integration/messages-access.test.ts);
// a fault (500), a model starting (503) and a failure after the stream's headers need the stub.
import { describe, expect, it } from 'vitest';
import { anthropicErrorType } from '../../src/api/messages/errors.js';
import { setup } from './harness.js';
import { GOOD_KEY } from './stub-access.js';

const body = (extra: Record<string, unknown> = {}) => ({ model: 'svc/tiny-chat', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }], ...extra });

async function expectAnthropicError(res: Response, status: number, type: string, mentions?: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/application\/json/);
  expect(res.headers.get('request-id')).toBe(res.headers.get('x-request-id'));
  expect(res.headers.get('request-id')).toBeTruthy();
  const json = (await res.json()) as { type: string; error: { type: string; message: string } };
  expect(Object.keys(json).sort()).toEqual(['error', 'type']);
  expect(json.type).toBe('error');
  expect(Object.keys(json.error).sort()).toEqual(['message', 'type']);
  expect(json.error.type).toBe(type);
  if (mentions) expect(json.error.message).toContain(mentions);
  return json.error;
}

describe('Anthropic error envelopes of the Messages routes, from the router over the stub engine', () => {
  it('answers a wrong or missing field with 400 invalid_request_error naming the field', async () => {
    const { post } = setup();
    await expectAnthropicError(await post('/v1/messages', body({ temperature: 1.5 })), 400, 'invalid_request_error', 'temperature');
    await expectAnthropicError(await post('/v1/messages', { model: 'svc/tiny-chat', messages: [{ role: 'user', content: 'hi' }] }), 400, 'invalid_request_error', 'max_tokens');
    await expectAnthropicError(await post('/v1/messages', body({ stop_sequences: 'END' })), 400, 'invalid_request_error', 'stop_sequences');
    await expectAnthropicError(await post('/v1/messages', body({ messages: [{ role: 'user', content: [{ type: 'text', text: 5 }] }] })), 400, 'invalid_request_error', 'messages[0].content[0].text');
    await expectAnthropicError(await post('/v1/messages/count_tokens', { model: 'svc/tiny-chat', messages: 'hi' }), 400, 'invalid_request_error', 'messages');
    await expectAnthropicError(await post('/v1/messages', '{"model": '), 400, 'invalid_request_error');
  });

  it('answers a missing or unknown key with 401 authentication_error, by x-api-key as by Authorization', async () => {
    const { fetch } = setup();
    const send = (headers: Record<string, string>) => fetch('/v1/messages', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body()) });
    await expectAnthropicError(await send({}), 401, 'authentication_error');
    await expectAnthropicError(await send({ 'x-api-key': 'sk-ant-not-ours' }), 401, 'authentication_error');
    await expectAnthropicError(await send({ authorization: 'Bearer sk-ant-not-ours' }), 401, 'authentication_error');
    expect((await send({ 'x-api-key': GOOD_KEY })).status).toBe(200);
  });

  it('answers an unknown model, and an unknown path under /v1/messages, with 404 not_found_error', async () => {
    const { post, get } = setup();
    await expectAnthropicError(await post('/v1/messages', body({ model: 'svc/nope' })), 404, 'not_found_error', 'svc/nope');
    await expectAnthropicError(await post('/v1/messages/batches', body()), 404, 'not_found_error');
    await expectAnthropicError(await get('/v1/models/svc%2Fnope', { authorization: `Bearer ${GOOD_KEY}`, 'anthropic-version': '2023-06-01' }), 404, 'not_found_error');
  });

  it('answers a body over the size limit with 413 request_too_large', async () => {
    const { post } = setup({ maxBodyBytes: 200 });
    await expectAnthropicError(await post('/v1/messages', body({ system: 'x'.repeat(400) })), 413, 'request_too_large');
  });

  it('answers the rate limit and the spending cap with 429 rate_limit_error, keeping retry-after and x-should-retry', async () => {
    const limited = setup();
    limited.access.limit = 0;
    const rate = await limited.post('/v1/messages', body());
    expect(rate.headers.get('retry-after')).toBe('7');
    await expectAnthropicError(rate, 429, 'rate_limit_error');
    const capped = setup();
    capped.access.overQuota = true;
    const cap = await capped.post('/v1/messages', body());
    expect(cap.headers.get('x-should-retry')).toBe('false');
    await expectAnthropicError(cap, 429, 'rate_limit_error', 'quota');
  });

  it('answers an internal fault with 500 api_error, its details kept out of the message', async () => {
    const { post, engine } = setup();
    engine.script = () => ({ error: new Error('tensor exploded at /secret/path/model.onnx') });
    const e = await expectAnthropicError(await post('/v1/messages', body()), 500, 'api_error', '/status');
    expect(e.message).not.toContain('secret');
  });

  it('answers a model that is starting with 503 overloaded_error and retry-after', async () => {
    const { post } = setup();
    const res = await post('/v1/messages', body({ model: 'svc/warming' }));
    expect(res.headers.get('retry-after')).toBeTruthy();
    await expectAnthropicError(res, 503, 'overloaded_error', 'svc/warming');
  });

  it('ends a stream that fails after its headers with an `event: error` in the same envelope', async () => {
    const { post, engine } = setup();
    engine.script = () => ({ tokens: ['Hello', ' world', '!'], failAfter: 2 });
    const res = await post('/v1/messages', body({ stream: true }));
    expect(res.status).toBe(200);
    expect(res.headers.get('request-id')).toBeTruthy();
    const frames = (await res.text()).split('\n\n').filter(Boolean);
    const last = frames.at(-1)!.split('\n');
    expect(last[0]).toBe('event: error');
    const data = JSON.parse(last[1]!.slice('data: '.length)) as { type: string; error: { type: string; message: string } };
    expect(data).toEqual({ type: 'error', error: { type: 'api_error', message: expect.stringContaining('/status') } });
    expect(frames.map((f) => f.split('\n')[0])).not.toContain('event: message_stop');
  });

  it('leaves the OpenAI routes’ envelope as it was, and GET /v1/models without anthropic-version too', async () => {
    const { post, get } = setup();
    const chat = await post('/v1/chat/completions', { model: 'svc/nope', messages: [{ role: 'user', content: 'hi' }] });
    expect(((await chat.json()) as { error: { code: string } }).error.code).toBe('model_not_found');
    expect(chat.headers.get('request-id')).toBeNull();
    const models = (await (await get('/v1/models')).json()) as { object: string };
    expect(models.object).toBe('list');
  });

  it('gives each status its Anthropic type, 403 permission_error included', () => {
    const table = Object.fromEntries([400, 401, 403, 404, 405, 413, 429, 500, 502, 503].map((s) => [s, anthropicErrorType(s)]));
    expect(table).toEqual({
      400: 'invalid_request_error',
      401: 'authentication_error',
      403: 'permission_error',
      404: 'not_found_error',
      405: 'invalid_request_error',
      413: 'request_too_large',
      429: 'rate_limit_error',
      500: 'api_error',
      502: 'api_error',
      503: 'overloaded_error',
    });
  });
});
