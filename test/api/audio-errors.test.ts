// Every refusal of the audio routes with a stub engine: each 400 names its field in OpenAI's
// envelope, with an x-request-id; a body over --max-audio-bytes is a 413 while it is read (a
// declared length before it is read); nothing refused is charged, and every hold is settled.
import { describe, expect, test } from 'vitest';
import { EngineError } from '../../src/engine/errors.js';
import { audioFields, setupAudio, WHISPER } from './audio-harness.js';
import { AUTH } from './stub-access.js';

const T = '/v1/audio/transcriptions';
const TR = '/v1/audio/translations';

type S = ReturnType<typeof setupAudio>;

async function refused(s: S, res: Response, status: number, param: string | null, code = 'invalid_value') {
  expect(res.status).toBe(status);
  expect(res.headers.get('x-request-id')).toBeTruthy();
  const body = await res.json();
  expect(body).toEqual({ error: { message: expect.any(String), type: 'invalid_request_error', param, code } });
  expect(s.access.records).toEqual([]);
  expect(s.access.holds.every((h) => h.settled)).toBe(true);
  return body.error.message as string;
}

describe('the audio routes refuse bad forms in the envelope, naming the field, with a stub engine', () => {
  test('no file, a file sent as a text field, and an empty file', async () => {
    const s = setupAudio();
    const { file: _f, ...noFile } = audioFields();
    await refused(s, await s.postForm(T, noFile), 400, 'file', 'missing_required_parameter');
    await refused(s, await s.postForm(T, { ...noFile, file: 'not a file' }), 400, 'file');
    expect(await refused(s, await s.postForm(T, audioFields({ file: new Blob([]) })), 400, 'file')).toMatch(/empty/);
    expect(s.engine.transcribeCalls).toEqual([]);
  });

  test('no model, an unknown model, and a chat model', async () => {
    const s = setupAudio();
    const { model: _m, ...noModel } = audioFields();
    expect(await refused(s, await s.postForm(T, noModel), 400, 'model', 'missing_required_parameter')).toBe('you must provide a model parameter');
    await refused(s, await s.postForm(T, audioFields({ model: 'svc/nope' })), 404, 'model', 'model_not_found');
    expect(await refused(s, await s.postForm(T, audioFields({ model: 'svc/tiny-chat' })), 400, 'model')).toMatch(/chat model and does not serve audio transcriptions/);
    await refused(s, await s.postForm(TR, audioFields({ model: 'svc/tiny-embed' })), 400, 'model');
  });

  test('an unknown response_format, temperature out of range or not a number, stream not a boolean', async () => {
    const s = setupAudio();
    await refused(s, await s.postForm(T, audioFields({ response_format: 'diarized_json' })), 400, 'response_format');
    await refused(s, await s.postForm(TR, audioFields({ response_format: 'xml' })), 400, 'response_format');
    await refused(s, await s.postForm(T, audioFields({ temperature: '1.5' })), 400, 'temperature');
    await refused(s, await s.postForm(T, audioFields({ temperature: 'warm' })), 400, 'temperature');
    await refused(s, await s.postForm(T, audioFields({ stream: 'yes' })), 400, 'stream');
    await refused(s, await s.postForm(T, audioFields({ prompt: ['a', 'b'] })), 400, 'prompt');
  });

  test('timestamp_granularities without verbose_json (either spelling), or with an unknown value', async () => {
    const s = setupAudio();
    await refused(s, await s.postForm(T, audioFields({ 'timestamp_granularities[]': 'word' })), 400, 'timestamp_granularities');
    await refused(s, await s.postForm(T, audioFields({ response_format: 'srt', timestamp_granularities: 'segment' })), 400, 'timestamp_granularities');
    await refused(s, await s.postForm(T, audioFields({ response_format: 'verbose_json', 'timestamp_granularities[]': 'sentence' })), 400, 'timestamp_granularities[0]');
    // The bare spelling is read as a list too: accepted with verbose_json.
    expect((await s.postForm(T, audioFields({ response_format: 'verbose_json', timestamp_granularities: 'word' }))).status).toBe(200);
  });

  test('include with a value other than logprobs, or logprobs outside json and streams', async () => {
    const s = setupAudio();
    await refused(s, await s.postForm(T, audioFields({ 'include[]': 'everything' })), 400, 'include[0]');
    await refused(s, await s.postForm(T, audioFields({ 'include[]': 'logprobs', response_format: 'verbose_json' })), 400, 'include');
    await refused(s, await s.postForm(T, audioFields({ 'include[]': 'logprobs', response_format: 'text' })), 400, 'include');
  });

  test('a stream of a subtitle or verbose format, and a streamed translation', async () => {
    const s = setupAudio();
    await refused(s, await s.postForm(T, audioFields({ stream: 'true', response_format: 'srt' })), 400, 'response_format');
    await refused(s, await s.postForm(TR, audioFields({ stream: 'true' })), 400, 'stream');
  });

  test('fields that would change the answer and are not acted on: diarization, server VAD, language lists, keywords', async () => {
    const s = setupAudio();
    await refused(s, await s.postForm(T, audioFields({ 'known_speaker_names[]': 'ann' })), 400, 'known_speaker_names');
    await refused(s, await s.postForm(T, audioFields({ 'chunking_strategy[type]': 'server_vad' })), 400, 'chunking_strategy');
    await refused(s, await s.postForm(T, audioFields({ 'languages[]': 'en' })), 400, 'languages');
    await refused(s, await s.postForm(T, audioFields({ 'keywords[]': 'Hearth' })), 400, 'keywords');
  });

  test('a JSON body (or none) is refused naming its content type', async () => {
    const s = setupAudio();
    const json = await s.post(T, { model: WHISPER, file: 'aGVsbG8=' });
    expect(await refused(s, json, 400, null)).toMatch(/Content-Type header \(application\/json\).*multipart\/form-data/);
    const none = await s.fetch(T, { method: 'POST', headers: AUTH });
    expect(await refused(s, none, 400, null)).toMatch(/\(none\)/);
  });

  test('a body the multipart parser cannot read', async () => {
    const s = setupAudio();
    const res = await s.fetch(T, { method: 'POST', headers: { ...AUTH, 'content-type': 'multipart/form-data; boundary=xyz' }, body: 'garbage' });
    await refused(s, res, 400, null);
  });

  test('the engine\'s refusals (a file it cannot decode, audio past --max-audio-seconds) come through in the envelope', async () => {
    const s = setupAudio({ maxAudioSeconds: 4 });
    expect(await refused(s, await s.postForm(T, audioFields()), 400, 'file')).toMatch(/at most 4 s/);
    s.engine.transcribeScript = () => ({ error: new EngineError('invalid_value', 'The file is not audio this server can decode (wav, flac, mp3, ogg, webm, m4a).', 'file') });
    await refused(s, await s.postForm(T, audioFields({ stream: 'true' })), 400, 'file');
    s.engine.transcribeScript = () => ({ error: new EngineError('invalid_value', "The model does not know the language 'xx'.", 'language') });
    await refused(s, await s.postForm(T, audioFields({ language: 'xx' })), 400, 'language');
    expect(s.access.holds).toHaveLength(3);
  });

  test('an engine without transcribe() refuses the model', async () => {
    const s = setupAudio();
    (s.engine as { transcribe?: unknown }).transcribe = undefined;
    expect(await refused(s, await s.postForm(T, audioFields()), 400, 'model')).toMatch(/does not transcribe/);
  });

  test('a request without a key is 401 and not served', async () => {
    const s = setupAudio();
    const res = await s.postForm(T, audioFields(), { headers: {} });
    expect(res.status).toBe(401);
    expect(s.engine.transcribeCalls).toEqual([]);
  });
});

describe('the audio routes bound their bodies by --max-audio-bytes, not --max-body-bytes', () => {
  const boundary = 'hearthboundary';
  const head = (fields: Record<string, string>) =>
    Object.entries(fields)
      .map(([k, v]) => `--${boundary}\r\ncontent-disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`)
      .join('') + `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="a.wav"\r\ncontent-type: audio/wav\r\n\r\n`;

  test('takes a file larger than --max-body-bytes', async () => {
    const s = setupAudio({ maxBodyBytes: 1000 });
    const res = await s.postForm(T, audioFields());
    expect(res.status).toBe(200);
  });

  test('refuses a body past the bound with 413 while reading it, cancelling the upload', async () => {
    const s = setupAudio({ maxAudioBytes: 4000, maxBodyBytes: 1000 });
    let pulled = 0;
    const enc = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        pulled++;
        c.enqueue(pulled === 1 ? enc.encode(head({ model: WHISPER })) : new Uint8Array(1000));
        if (pulled > 1000) c.close();
      },
    });
    const res = await s.fetch(T, {
      method: 'POST',
      headers: { ...AUTH, 'content-type': `multipart/form-data; boundary=${boundary}` },
      body,
      duplex: 'half',
    } as RequestInit);
    expect(await refused(s, res, 413, 'file', 'request_too_large')).toMatch(/4000 bytes/);
    expect(pulled).toBeLessThan(10);
    expect(s.engine.transcribeCalls).toEqual([]);
  });

  test('refuses a declared length past the bound before reading, and a file past it inside a smaller form', async () => {
    const s = setupAudio({ maxAudioBytes: 4000, maxBodyBytes: 1_000_000 });
    const declared = await s.fetch(T, {
      method: 'POST',
      headers: { ...AUTH, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': '2000000' },
      body: 'x'.repeat(10),
    });
    await refused(s, declared, 413, 'file', 'request_too_large');
    const big = await s.postForm(T, audioFields({ file: new Blob([new Uint8Array(4001)]) }));
    await refused(s, big, 413, 'file', 'request_too_large');
    const fits = await s.postForm(T, audioFields({ file: new Blob([new Uint8Array(4000)]) }));
    expect(fits.status).toBe(200);
  });
});
