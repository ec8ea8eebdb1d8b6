// One test per row of DESIGN.md's error table (and the engine's error codes),
// each body checked against OpenAI's ErrorResponse schema.
import { describe, expect, test } from 'vitest';
import { EngineError, serializeError } from '../../src/engine/errors.js';
import type { RequestEvent } from '../../src/types.js';
import { validateAgainst } from '../helpers/openapi.js';
import { setup } from './harness.js';

const chat = (extra: Record<string, unknown> = {}) => ({ model: 'svc/tiny-chat', messages: [{ role: 'user', content: 'hi' }], ...extra });

async function expectError(res: Response, status: number, type: string, code: string | null, param: string | null = null) {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/application\/json/);
  expect(res.headers.get('x-request-id')).toBeTruthy();
  const body = await res.json();
  expect(body.error).toMatchObject({ type, code, param });
  expect(typeof body.error.message).toBe('string');
  expect(validateAgainst('ErrorResponse', body)).toEqual([]);
  return body.error as { message: string };
}

describe('error envelopes from the router over the stub engine', () => {
  test('malformed JSON is 400 invalid_json', async () => {
    const { post } = setup();
    await expectError(await post('/v1/chat/completions', '{"model": '), 400, 'invalid_request_error', 'invalid_json');
  });

  test('a body that is JSON but not an object is 400 invalid_value', async () => {
    const { post } = setup();
    await expectError(await post('/v1/chat/completions', '[1,2]'), 400, 'invalid_request_error', 'invalid_value');
  });

  test('a missing model is 400 missing_required_parameter with param model', async () => {
    const { post } = setup();
    await expectError(await post('/v1/chat/completions', { messages: [{ role: 'user', content: 'hi' }] }), 400, 'invalid_request_error', 'missing_required_parameter', 'model');
  });

  test('missing messages is 400 missing_required_parameter with param messages', async () => {
    const { post } = setup();
    await expectError(await post('/v1/chat/completions', { model: 'svc/tiny-chat' }), 400, 'invalid_request_error', 'missing_required_parameter', 'messages');
  });

  test('a temperature out of range is 400 invalid_value naming temperature', async () => {
    const { post } = setup();
    await expectError(await post('/v1/chat/completions', chat({ temperature: 2.5 })), 400, 'invalid_request_error', 'invalid_value', 'temperature');
  });

  test('a wrongly typed message content is 400 invalid_value naming messages[0].content', async () => {
    const { post } = setup();
    const res = await post('/v1/chat/completions', { model: 'svc/tiny-chat', messages: [{ role: 'user', content: 5 }] });
    await expectError(res, 400, 'invalid_request_error', 'invalid_value', 'messages[0].content');
  });

  test('an unknown role, five stop strings, n=0 and top_p=0 are each 400 naming the field', async () => {
    const { post } = setup();
    await expectError(await post('/v1/chat/completions', { model: 'svc/tiny-chat', messages: [{ role: 'robot', content: 'x' }] }), 400, 'invalid_request_error', 'invalid_value', 'messages[0].role');
    await expectError(await post('/v1/chat/completions', chat({ stop: ['a', 'b', 'c', 'd', 'e'] })), 400, 'invalid_request_error', 'invalid_value', 'stop');
    await expectError(await post('/v1/chat/completions', chat({ n: 0 })), 400, 'invalid_request_error', 'invalid_value', 'n');
    await expectError(await post('/v1/chat/completions', chat({ top_p: 0 })), 400, 'invalid_request_error', 'invalid_value', 'top_p');
    await expectError(await post('/v1/chat/completions', chat({ stream_options: { include_usage: 'yes' } })), 400, 'invalid_request_error', 'invalid_value', 'stream_options.include_usage');
  });

  test('context_length_exceeded from the stub engine is 400 with the engine\'s param', async () => {
    const { post, engine } = setup();
    engine.script = () => ({ error: new EngineError('context_length_exceeded', "This model's maximum context length is 2048 tokens.", 'messages') });
    await expectError(await post('/v1/chat/completions', chat()), 400, 'invalid_request_error', 'context_length_exceeded', 'messages');
    engine.script = () => ({ error: new EngineError('context_length_exceeded', 'too long', 'prompt') });
    await expectError(await post('/v1/completions', { model: 'svc/tiny-chat', prompt: 'x' }), 400, 'invalid_request_error', 'context_length_exceeded', 'prompt');
  });

  test('an engine error that crossed the worker boundary as a plain object is mapped by its code', async () => {
    const { post, engine } = setup();
    engine.script = () => ({ error: serializeError(new EngineError('invalid_value', 'bad stop token', 'stop')) });
    await expectError(await post('/v1/chat/completions', chat()), 400, 'invalid_request_error', 'invalid_value', 'stop');
  });

  test('a missing or wrong key is 401 invalid_api_key', async () => {
    const { fetch, post } = setup();
    await expectError(await fetch('/v1/models'), 401, 'invalid_request_error', 'invalid_api_key');
    await expectError(await post('/v1/chat/completions', chat(), { authorization: 'Bearer sk-nope' }), 401, 'invalid_request_error', 'invalid_api_key');
  });

  test('an unknown model is 404 model_not_found with param model', async () => {
    const { post } = setup();
    await expectError(await post('/v1/chat/completions', chat({ model: 'svc/nope' })), 404, 'invalid_request_error', 'model_not_found', 'model');
  });

  test('model_not_found from the stub engine is 404', async () => {
    const { post, engine } = setup();
    engine.script = () => ({ error: new EngineError('model_not_found', 'gone', 'model') });
    await expectError(await post('/v1/chat/completions', chat()), 404, 'invalid_request_error', 'model_not_found', 'model');
  });

  test('an unknown path is 404 unknown_url', async () => {
    const { get, post } = setup();
    await expectError(await get('/v1/nothing-here'), 404, 'invalid_request_error', 'unknown_url');
    await expectError(await post('/nope', {}), 404, 'invalid_request_error', 'unknown_url');
  });

  test('a wrong method on a known path is a 405 envelope with an allow header', async () => {
    const { get, fetch } = setup();
    const res = await get('/v1/chat/completions');
    await expectError(res, 405, 'invalid_request_error', 'method_not_allowed');
    expect(res.headers.get('allow')).toContain('POST');
    await expectError(await fetch('/health', { method: 'DELETE' }), 405, 'invalid_request_error', 'method_not_allowed');
  });

  test('an oversize body is 413 request_too_large', async () => {
    const { post } = setup({ maxBodyBytes: 100 });
    await expectError(await post('/v1/chat/completions', chat({ pad: 'x'.repeat(200) })), 413, 'invalid_request_error', 'request_too_large');
  });

  test('the per-key rate limit is 429 rate_limit_exceeded with retry-after and the rate headers', async () => {
    const { post, access } = setup();
    access.limit = 1;
    expect((await post('/v1/chat/completions', chat())).status).toBe(200);
    const res = await post('/v1/chat/completions', chat());
    await expectError(res, 429, 'requests', 'rate_limit_exceeded');
    expect(res.headers.get('retry-after')).toBe('7');
    expect(res.headers.get('x-ratelimit-limit-requests')).toBe('1');
    expect(res.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    expect(res.headers.get('x-ratelimit-reset-requests')).toBe('7s');
  });

  test('a reached spending cap is 429 insufficient_quota with x-should-retry false', async () => {
    const { post, access } = setup();
    access.overQuota = true;
    const res = await post('/v1/chat/completions', chat());
    await expectError(res, 429, 'insufficient_quota', 'insufficient_quota');
    expect(res.headers.get('x-should-retry')).toBe('false');
    expect(res.headers.get('x-ratelimit-limit-requests')).toBe('60');
  });

  test('an internal fault is 500 server_error pointing to /status without leaking the cause', async () => {
    const { post, engine, get } = setup();
    engine.script = () => ({ error: new Error('ENOENT /secret/path/model.onnx') });
    const res = await post('/v1/chat/completions', chat());
    const err = await expectError(res, 500, 'server_error', 'server_error');
    expect(err.message).toContain('/status');
    expect(err.message).not.toMatch(/secret|ENOENT/);
    const page = await (await get('/status', {})).text();
    expect(page).toContain(res.headers.get('x-request-id')!);
    expect(page).not.toContain('secret');
  });

  test('an internal fault reaches the request log with its cause, for the operator', async () => {
    const { post, engine, runtime } = setup();
    const events: RequestEvent[] = [];
    runtime.observer = { request: (ev) => events.push(ev) };
    engine.script = () => ({ error: new TypeError('Cannot convert undefined to a BigInt') });
    const res = await post('/v1/chat/completions', chat());
    expect(res.status).toBe(500);
    const logged = events.find((ev) => ev.requestId === res.headers.get('x-request-id'));
    expect(logged?.error).toMatchObject({ type: 'TypeError', message: 'Cannot convert undefined to a BigInt' });
    expect(logged?.error?.stack).toContain('TypeError');
  });

  test('engine_crashed from the stub engine is a 503 engine_restarting with retry-after, never a 500', async () => {
    const { post, engine } = setup();
    engine.script = () => ({ error: new EngineError('engine_crashed', 'worker died', null, 5) });
    const res = await post('/v1/chat/completions', chat());
    await expectError(res, 503, 'unavailable_error', 'engine_restarting');
    expect(res.headers.get('retry-after')).toBe('5');
  });

  test('a model that is starting is 503 model_not_ready with retry-after', async () => {
    const { post } = setup();
    const res = await post('/v1/chat/completions', chat({ model: 'svc/warming' }));
    await expectError(res, 503, 'unavailable_error', 'model_not_ready');
    expect(res.headers.get('retry-after')).toBe('1');
  });

  test('model_not_ready from the stub engine is 503 with its retryAfter in retry-after', async () => {
    const { post, engine } = setup();
    engine.script = () => ({ error: new EngineError('model_not_ready', 'redeploying', null, 12) });
    const res = await post('/v1/chat/completions', chat());
    await expectError(res, 503, 'unavailable_error', 'model_not_ready');
    expect(res.headers.get('retry-after')).toBe('12');
  });

  test('device_lost from the engine is 503 unavailable_error with its message and a retry-after', async () => {
    const { post, engine } = setup();
    engine.script = () => ({ error: new EngineError('device_lost', 'The WebGPU device was lost (destroyed)') });
    const res = await post('/v1/chat/completions', chat());
    const err = await expectError(res, 503, 'unavailable_error', 'device_lost');
    expect(err.message).toBe('The WebGPU device was lost (destroyed)');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  test('chat on an embedding model and embeddings on a chat model are 400 invalid_value with param model', async () => {
    const { post } = setup();
    await expectError(await post('/v1/chat/completions', chat({ model: 'svc/tiny-embed' })), 400, 'invalid_request_error', 'invalid_value', 'model');
    await expectError(await post('/v1/completions', { model: 'svc/tiny-embed', prompt: 'x' }), 400, 'invalid_request_error', 'invalid_value', 'model');
    await expectError(await post('/v1/embeddings', { model: 'svc/tiny-chat', input: 'x' }), 400, 'invalid_request_error', 'invalid_value', 'model');
  });

  test('unsupported_task from the stub engine is 400 invalid_value with param model', async () => {
    const { post, engine } = setup();
    engine.script = () => ({ error: new EngineError('unsupported_task', 'no chat template') });
    await expectError(await post('/v1/chat/completions', chat()), 400, 'invalid_request_error', 'invalid_value', 'model');
  });
});
