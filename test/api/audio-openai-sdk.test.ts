// The official openai SDK's audio.transcriptions and audio.translations against the router
// in-process (its fetch is the router's), with a stub engine: the multipart body it builds is
// read as it sends it (arrays as `key[]`, numbers and booleans as strings), json and verbose_json
// come back parsed, text/srt/vtt as strings, a stream as its typed events, and refusals as its
// typed errors with our codes.
import OpenAI, { toFile } from 'openai';
import { describe, expect, test } from 'vitest';
import { setupAudio, wav, WHISPER } from './audio-harness.js';
import { GOOD_KEY } from './stub-access.js';
import { STUB_DELTAS, STUB_SEGMENTS, STUB_WORDS } from './stub-engine.js';

const TEXT = 'Hello world. How --> are you?';

function client(s: ReturnType<typeof setupAudio>) {
  return new OpenAI({
    apiKey: GOOD_KEY,
    baseURL: 'http://hearth.test/v1',
    maxRetries: 0,
    fetch: async (url: string | URL | Request, init?: RequestInit) => s.app.fetch(new Request(url, init)),
  });
}

const file = () => toFile(wav(1), 'a.wav', { type: 'audio/wav' });

describe('the openai SDK transcribes and translates through the router with a stub engine', () => {
  test('json by default, with the duration usage', async () => {
    const s = setupAudio();
    const r = await client(s).audio.transcriptions.create({ file: await file(), model: WHISPER });
    expect(r).toEqual({ text: TEXT, usage: { type: 'duration', seconds: 5 } });
  });

  test('sends language, prompt, temperature, include[] and timestamp_granularities[] as the router reads them', async () => {
    const s = setupAudio();
    const r = await client(s).audio.transcriptions.create({
      file: await file(),
      model: WHISPER,
      language: 'en',
      prompt: 'Greetings.',
      temperature: 0.3,
      response_format: 'verbose_json',
      timestamp_granularities: ['word', 'segment'],
    });
    expect(s.engine.transcribeCalls[0]).toMatchObject({ language: 'en', prompt: 'Greetings.', temperature: 0.3, timestamps: 'word' });
    expect(r).toMatchObject({ task: 'transcribe', language: 'english', duration: 4.25, text: TEXT, segments: STUB_SEGMENTS, words: STUB_WORDS });
    const lp = await client(s).audio.transcriptions.create({ file: await file(), model: WHISPER, include: ['logprobs'] });
    expect(lp.logprobs).toHaveLength(STUB_DELTAS.length);
  });

  test('text, srt and vtt come back as strings', async () => {
    const s = setupAudio();
    const sdk = client(s);
    const text = await sdk.audio.transcriptions.create({ file: await file(), model: WHISPER, response_format: 'text' });
    expect(text).toBe(TEXT);
    const srt = await sdk.audio.transcriptions.create({ file: await file(), model: WHISPER, response_format: 'srt' });
    expect(typeof srt).toBe('string');
    expect(srt).toMatch(/^1\n00:00:00,000 --> 00:00:02,500\nHello world\.\n\n/);
    const vtt = await sdk.audio.transcriptions.create({ file: await file(), model: WHISPER, response_format: 'vtt' });
    expect(vtt).toMatch(/^WEBVTT\n\n00:00:00\.000 --> 00:00:02\.500\n/);
  });

  test('a stream yields each delta event and the done event', async () => {
    const s = setupAudio();
    const stream = await client(s).audio.transcriptions.create({ file: await file(), model: WHISPER, stream: true });
    const events: OpenAI.Audio.TranscriptionStreamEvent[] = [];
    for await (const ev of stream) events.push(ev);
    expect(events.map((e) => e.type)).toEqual([...STUB_DELTAS.map(() => 'transcript.text.delta'), 'transcript.text.done']);
    expect(events.filter((e) => e.type === 'transcript.text.delta').map((e) => (e as OpenAI.Audio.TranscriptionTextDeltaEvent).delta).join('')).toBe(' ' + TEXT);
    expect(events.at(-1)).toMatchObject({ text: TEXT });
  });

  test('translations in json, verbose_json and text', async () => {
    const s = setupAudio();
    const sdk = client(s);
    expect(await sdk.audio.translations.create({ file: await file(), model: WHISPER })).toEqual({ text: TEXT });
    const verbose = await sdk.audio.translations.create({ file: await file(), model: WHISPER, response_format: 'verbose_json', temperature: 0.2 });
    expect(verbose).toMatchObject({ task: 'translate', duration: 4.25, segments: STUB_SEGMENTS });
    expect(s.engine.transcribeCalls[1]).toMatchObject({ task: 'translate', temperature: 0.2 });
    expect(await sdk.audio.translations.create({ file: await file(), model: WHISPER, response_format: 'text' })).toBe(TEXT);
  });

  test('refusals are the SDK\'s typed errors with our param and code', async () => {
    const s = setupAudio();
    const sdk = client(s);
    const err = await sdk.audio.transcriptions.create({ file: await file(), model: WHISPER, response_format: 'json', timestamp_granularities: ['word'] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err).toMatchObject({ status: 400, param: 'timestamp_granularities', code: 'invalid_value' });
    const chat = await sdk.audio.transcriptions.create({ file: await file(), model: 'svc/tiny-chat' }).catch((e: unknown) => e);
    expect(chat).toMatchObject({ status: 400, param: 'model' });
    const big = await setupAudioSdk({ maxAudioBytes: 100 }).audio.transcriptions.create({ file: await file(), model: WHISPER }).catch((e: unknown) => e);
    expect(big).toMatchObject({ status: 413, code: 'request_too_large', param: 'file' });
  });
});

function setupAudioSdk(options: Parameters<typeof setupAudio>[0]) {
  return client(setupAudio(options));
}
