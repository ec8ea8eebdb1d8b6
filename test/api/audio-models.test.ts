// A transcription model in the model list, /health and /status, with a stub engine: its task
// and input_modalities are the engine's (ModelState) as they are, and it serves only the audio
// routes (a chat request for it is refused naming the model).
import { describe, expect, test } from 'vitest';
import { validateAgainst } from '../helpers/openapi.js';
import { setupAudio, WHISPER } from './audio-harness.js';

describe('a transcription model beside the others, with a stub engine', () => {
  test('is listed with task "transcription" and input_modalities ["audio"], in /v1/models and /v1/models/{id}', async () => {
    const { get } = setupAudio();
    const list = await (await get('/v1/models')).json();
    const entry = list.data.find((m: { id: string }) => m.id === WHISPER);
    expect(entry).toMatchObject({ id: WHISPER, object: 'model', task: 'transcription', status: 'ready', input_modalities: ['audio'] });
    expect(validateAgainst('ListModelsResponse', list)).toEqual([]);
    expect(await (await get(`/v1/models/${WHISPER}`)).json()).toEqual(entry);
  });

  test('shows in /health and on /status', async () => {
    const { get } = setupAudio();
    expect((await (await get('/health', {})).json()).models[WHISPER]).toBe('ready');
    const page = await (await get('/status', {})).text();
    expect(page).toContain(WHISPER);
    expect(page).toContain('transcription');
  });

  test('is refused for chat and embeddings, naming the model', async () => {
    const { post } = setupAudio();
    const chat = await post('/v1/chat/completions', { model: WHISPER, messages: [{ role: 'user', content: 'hi' }] });
    expect(chat.status).toBe(400);
    expect((await chat.json()).error).toMatchObject({ param: 'model', message: expect.stringMatching(/transcription model and does not serve chat/) });
    const emb = await post('/v1/embeddings', { model: WHISPER, input: 'x' });
    expect(emb.status).toBe(400);
  });
});
