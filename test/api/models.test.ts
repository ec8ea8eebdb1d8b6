import { describe, expect, test } from 'vitest';
import { validateAgainst } from '../helpers/openapi.js';
import { setup } from './harness.js';

describe('GET /v1/models over the stub engine', () => {
  test('lists every model with class, context_length, task, status and input_modalities', async () => {
    const { get } = setup();
    const body = await (await get('/v1/models')).json();
    expect(body.object).toBe('list');
    expect(body.data.map((m: { id: string }) => m.id)).toEqual(['svc/tiny-chat', 'svc/tiny-embed', 'svc/tiny-rerank', 'svc/warming']);
    expect(body.data.map((m: { task: string }) => m.task)).toEqual(['chat', 'embedding', 'rerank', 'chat']);
    expect(body.data[0]).toEqual({
      id: 'svc/tiny-chat',
      object: 'model',
      created: 1_700_000_000,
      owned_by: 'hearth',
      class: '7B',
      context_length: 2048,
      task: 'chat',
      status: 'ready',
      input_modalities: ['text'],
    });
    expect(body.data[3].status).toBe('starting');
    expect(validateAgainst('ListModelsResponse', body)).toEqual([]);
  });

  test('gets one model by its id with a literal slash or %2F', async () => {
    const { get } = setup();
    for (const path of ['/v1/models/svc/tiny-chat', '/v1/models/svc%2Ftiny-chat', '/v1/models/svc%2ftiny-chat']) {
      const res = await get(path);
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(body).toMatchObject({ id: 'svc/tiny-chat', object: 'model', task: 'chat' });
      expect(validateAgainst('Model', body)).toEqual([]);
    }
  });

  test('answers an unknown id with 404 model_not_found', async () => {
    const { get } = setup();
    const res = await get('/v1/models/svc%2Fnope');
    expect(res.status).toBe(404);
    expect((await res.json()).error).toMatchObject({ code: 'model_not_found', param: 'model' });
  });

  test('mounts the OpenAI routes under another basePath when asked', async () => {
    const { get } = setup({ basePath: '/openai/v1/' });
    expect((await get('/openai/v1/models')).status).toBe(200);
    expect((await get('/v1/models')).status).toBe(404);
  });
});

describe('GET /health and GET /status over the stub engine', () => {
  test('/health answers without a key with each model\'s status', async () => {
    const { fetch } = setup();
    const res = await fetch('/health');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok', models: { 'svc/tiny-chat': 'ready', 'svc/tiny-embed': 'ready', 'svc/tiny-rerank': 'ready', 'svc/warming': 'starting' } });
  });

  test('/health is 503 when the stub engine does not answer', async () => {
    const { fetch, engine } = setup();
    engine.models = async () => {
      throw new Error('worker gone');
    };
    const res = await fetch('/health');
    expect(res.status).toBe(503);
    expect((await res.json()).status).not.toBe('ok');
  });

  test('/status is a self-contained HTML page with the model table', async () => {
    const { fetch } = setup();
    const res = await fetch('/status');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await res.text();
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain('svc/tiny-chat');
    expect(html).toContain('starting');
    expect(html).not.toMatch(/<script|src="http/);
  });

  test('/status escapes model details', async () => {
    const { fetch, engine } = setup();
    engine.modelStates[2]!.detail = '<img src=x onerror=alert(1)>';
    const html = await (await fetch('/status')).text();
    expect(html).toContain('&lt;img src=x');
    expect(html).not.toContain('<img');
  });
});
