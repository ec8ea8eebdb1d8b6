// x-request-id, CORS and the body size limit: what every route gets.
import { describe, expect, test } from 'vitest';
import { setup } from './harness.js';
import { AUTH } from './stub-access.js';

const chat = { model: 'svc/tiny-chat', messages: [{ role: 'user', content: 'hi' }] };

describe('x-request-id on every response from the router over the stub engine', () => {
  test('is generated as req_... on success, errors, 404s, preflights, health and streams', async () => {
    const { fetch, get, post } = setup();
    const responses = [
      await get('/v1/models'),
      await fetch('/v1/models'),
      await get('/v1/unknown'),
      await fetch('/v1/chat/completions', { method: 'OPTIONS' }),
      await fetch('/health'),
      await fetch('/status'),
      await post('/v1/chat/completions', { ...chat, stream: true }),
      await post('/v1/chat/completions', '{bad'),
    ];
    for (const res of responses) expect(res.headers.get('x-request-id')).toMatch(/^req_[A-Za-z0-9]{24}$/);
    expect(new Set(responses.map((r) => r.headers.get('x-request-id'))).size).toBe(responses.length);
  });

  test('echoes a sane incoming x-request-id and replaces one that is not', async () => {
    const { get } = setup();
    expect((await get('/v1/models', { ...AUTH, 'x-request-id': 'trace-123.abc' })).headers.get('x-request-id')).toBe('trace-123.abc');
    const bad = (await get('/v1/models', { ...AUTH, 'x-request-id': 'a b<script>' })).headers.get('x-request-id');
    expect(bad).toMatch(/^req_/);
  });
});

describe('CORS from the router', () => {
  test('answers a preflight with 204, any origin, and the headers the openai SDK asks for', async () => {
    const { fetch } = setup();
    const asked = 'authorization, content-type, x-stainless-os, x-stainless-retry-count, openai-organization';
    const res = await fetch('/v1/chat/completions', {
      method: 'OPTIONS',
      headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'POST', 'access-control-request-headers': asked },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-methods')).toContain('POST');
    expect(res.headers.get('access-control-allow-headers')).toBe(asked);
    expect(await res.text()).toBe('');
  });

  test('lists authorization and the x-stainless headers when a preflight names none', async () => {
    const { fetch } = setup();
    const res = await fetch('/v1/embeddings', { method: 'OPTIONS' });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-headers')).toMatch(/authorization.*content-type.*x-stainless-/);
  });

  test('exposes x-request-id, the rate headers and retry-after on ordinary responses', async () => {
    const { get } = setup();
    const res = await get('/v1/models', { ...AUTH, origin: 'http://example.test' });
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    const exposed = res.headers.get('access-control-expose-headers')!;
    for (const h of ['x-request-id', 'x-ratelimit-limit-requests', 'x-ratelimit-remaining-requests', 'x-ratelimit-reset-requests', 'retry-after']) {
      expect(exposed).toContain(h);
    }
  });
});

describe('the body size limit of the router', () => {
  test('refuses a declared Content-Length over the limit with 413 before reading it', async () => {
    const { fetch } = setup({ maxBodyBytes: 1000 });
    const res = await fetch('/v1/completions', {
      method: 'POST',
      headers: { ...AUTH, 'content-type': 'application/json', 'content-length': '5000' },
      body: JSON.stringify({ model: 'svc/tiny-chat', prompt: 'Hi' }),
    });
    expect(res.status).toBe(413);
    expect((await res.json()).error.code).toBe('request_too_large');
  });

  test("refuses a chat body declared larger than the limit and its images' allowance together, before reading it", async () => {
    const { fetch } = setup({ maxBodyBytes: 1000, maxImages: 1, maxImageBytes: 3000 });
    // 1000 bytes of text, and one image of 3,000 bytes as base64 (4,000) with room for its URL's prefix.
    const res = await fetch('/v1/chat/completions', {
      method: 'POST',
      headers: { ...AUTH, 'content-type': 'application/json', 'content-length': String(1000 + 4000 + 64 + 1) },
      body: JSON.stringify(chat),
    });
    expect(res.status).toBe(413);
  });

  test('refuses a chunked body with no Content-Length once it passes the limit, and stops reading it', async () => {
    const { fetch, engine } = setup({ maxBodyBytes: 1000 });
    let pulled = 0;
    const enc = new TextEncoder();
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        if (pulled === 1) controller.enqueue(enc.encode('{"model":"svc/tiny-chat","messages":[{"role":"user","content":"'));
        else if (pulled < 10_000) controller.enqueue(enc.encode('x'.repeat(100)));
        else controller.close();
      },
    });
    const res = await fetch('/v1/chat/completions', {
      method: 'POST',
      headers: { ...AUTH, 'content-type': 'application/json' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(413);
    expect((await res.json()).error).toMatchObject({ type: 'invalid_request_error', code: 'request_too_large' });
    expect(pulled).toBeLessThan(100);
    expect(engine.calls).toHaveLength(0);
  });

  test('accepts a body just under the default limit of 1 MiB', async () => {
    const { post } = setup();
    const res = await post('/v1/chat/completions', { ...chat, messages: [{ role: 'user', content: 'x'.repeat(1024 * 1024 - 200) }] });
    expect(res.status).toBe(200);
  });

  test('refuses a body just over the default limit of 1 MiB', async () => {
    const { post } = setup();
    const res = await post('/v1/chat/completions', { ...chat, messages: [{ role: 'user', content: 'x'.repeat(1024 * 1024) }] });
    expect(res.status).toBe(413);
  });
});

describe('the access gate of the router', () => {
  test('sets the rate headers in OpenAI\'s format on a served request', async () => {
    const { get } = setup();
    const res = await get('/v1/models');
    expect(res.headers.get('x-ratelimit-limit-requests')).toBe('60');
    expect(res.headers.get('x-ratelimit-remaining-requests')).toBe('59');
    expect(res.headers.get('x-ratelimit-reset-requests')).toBe('6m0s');
  });

  test('sets the rate headers on a stream and on a validation error too', async () => {
    const { post } = setup();
    const stream = await post('/v1/chat/completions', { ...chat, stream: true });
    expect(stream.headers.get('x-ratelimit-remaining-requests')).toBe('59');
    await stream.text();
    const bad = await post('/v1/chat/completions', { model: 'svc/tiny-chat' });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('x-ratelimit-remaining-requests')).toBe('58');
  });

  test('leaves /health and /status free of keys and of the rate limit', async () => {
    const { fetch, access } = setup();
    access.limit = 0;
    expect((await fetch('/health')).status).toBe(200);
    expect((await fetch('/status')).status).toBe(200);
    expect(access.used).toBe(0);
  });
});
