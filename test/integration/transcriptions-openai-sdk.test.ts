// Speech to text through the real server (hearth serve, the engine in its worker, the default
// catalog's svc/tiny-whisper) with the official openai SDK posting files as a user would:
// transformers.js's text for the same samples, every response format, a stream, translations,
// word timestamps, and the file formats Hearth decodes.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openapiAvailable, validateAgainst } from '../helpers/openapi.js';
import { startSdkServer, type TestServer } from '../helpers/server.js';
import { chirp, tone } from '../helpers/signals.js';
import { referenceTranscript } from '../helpers/speech.js';
import { wavBytes } from '../helpers/wav.js';

const MODEL = 'svc/tiny-whisper';
let server: TestServer;
let client: OpenAI;

beforeAll(async () => {
  ({ server, client } = await startSdkServer('hearth-audio-sdk-'));
}, 120_000);
afterAll(async () => {
  expect(await server?.stop()).toBe(0);
});

const signal = chirp(3, 200, 3000);
/** Float WAV at 16 kHz: the samples arrive exactly as the reference gets them. */
const file = (samples = signal, name = 'clip.wav') => toFile(wavBytes(samples, 16_000, { format: 'float32' }), name, { type: 'audio/wav' });

describe('transcriptions with the openai SDK against hearth serve', () => {
  it('lists the Whisper fixture as a transcription model that takes audio', async () => {
    expect(await client.models.retrieve(MODEL)).toMatchObject({ id: MODEL, task: 'transcription', status: 'ready', input_modalities: ['audio'] });
  });

  it("gives transformers.js's text as json, with its duration as usage", async () => {
    const ref = await referenceTranscript(signal);
    const json = await client.audio.transcriptions.create({ file: await file(), model: MODEL, language: 'en' });
    expect(json.text).toBe(ref.text);
    expect((json as unknown as { usage: unknown }).usage).toEqual({ type: 'duration', seconds: 3 });
    if (openapiAvailable) expect(validateAgainst('CreateTranscriptionResponseJson', json)).toEqual([]);
  });

  it("gives transformers.js's segments in verbose_json, and srt and vtt that match them", async () => {
    const ref = await referenceTranscript(signal, { timestamps: true });
    const verbose = await client.audio.transcriptions.create({ file: await file(), model: MODEL, language: 'en', response_format: 'verbose_json', timestamp_granularities: ['segment'] });
    expect(verbose.text).toBe(ref.text);
    expect(verbose.language).toBe('english');
    expect(verbose.segments!.map((s) => s.text.trim())).toEqual(ref.chunks!.map((c) => c.text.trim()));
    expect(verbose.segments!.map((s) => s.start)).toEqual(ref.chunks!.map((c) => c.timestamp[0]));
    if (openapiAvailable) expect(validateAgainst('CreateTranscriptionResponseVerboseJson', verbose)).toEqual([]);
    const srt = (await client.audio.transcriptions.create({ file: await file(), model: MODEL, language: 'en', response_format: 'srt' })) as unknown as string;
    const vtt = (await client.audio.transcriptions.create({ file: await file(), model: MODEL, language: 'en', response_format: 'vtt' })) as unknown as string;
    const blocks = srt.trim().split(/\n\n+/);
    expect(blocks.length).toBe(verbose.segments!.length);
    blocks.forEach((b, i) => expect(b.split('\n').slice(2).join('\n')).toBe(verbose.segments![i]!.text.trim()));
    expect(vtt.startsWith('WEBVTT')).toBe(true);
    for (const s of verbose.segments!) expect(vtt).toContain(s.text.trim());
    const text = (await client.audio.transcriptions.create({ file: await file(), model: MODEL, language: 'en', response_format: 'text' })) as unknown as string;
    expect(text.trim()).toBe((await referenceTranscript(signal)).text);
  });

  it('streams transcript.text.delta events that join to the text, then transcript.text.done', async () => {
    const ref = await referenceTranscript(signal);
    const stream = await client.audio.transcriptions.create({ file: await file(), model: MODEL, language: 'en', stream: true });
    let joined = '';
    let done: { text: string } | undefined;
    for await (const ev of stream) {
      if (ev.type === 'transcript.text.delta') joined += ev.delta;
      else if (ev.type === 'transcript.text.done') done = ev;
    }
    expect(joined).toBe(ref.text);
    expect(done?.text).toBe(ref.text);
  });

  it('gives word timestamps within the audio, in order', async () => {
    const verbose = await client.audio.transcriptions.create({ file: await file(), model: MODEL, language: 'en', response_format: 'verbose_json', timestamp_granularities: ['word', 'segment'] });
    expect(verbose.words!.length).toBeGreaterThan(0);
    for (const w of verbose.words!) {
      expect(w.start).toBeLessThanOrEqual(w.end);
      expect(w.end).toBeLessThanOrEqual(3);
    }
    expect(verbose.words!.map((w) => w.word).join('').trim()).toBe(verbose.text);
  });

  it("translates with transformers.js's text for the translate task, naming the detected source language", async () => {
    const translation = (await client.audio.translations.create({ file: await file(tone(2, 440)), model: MODEL, response_format: 'verbose_json' })) as OpenAI.Audio.TranslationVerbose;
    expect(translation.text.length).toBeGreaterThan(0);
    expect(typeof translation.language).toBe('string');
    // verbose_json asks for segments: the reference decodes with timestamps too.
    const ref = await referenceTranscript(tone(2, 440), { task: 'translate', language: translation.language, timestamps: true });
    expect(translation.text).toBe(ref.text);
  });

  it('transcribes the same signal the same from 16 kHz mono, 44.1 kHz stereo and float WAV', async () => {
    const at = (rate: number) => Float32Array.from({ length: Math.round(2 * rate) }, (_, i) => 0.5 * Math.sin((2 * Math.PI * 440 * i) / rate));
    const stereo = (s: Float32Array) => Float32Array.from({ length: s.length * 2 }, (_, i) => s[i >> 1]!);
    const texts = await Promise.all([
      toFile(wavBytes(at(16_000), 16_000), 'a.wav'),
      toFile(wavBytes(stereo(at(44_100)), 44_100, { channels: 2 }), 'b.wav'),
      toFile(wavBytes(at(16_000), 16_000, { format: 'float32' }), 'c.wav'),
    ].map(async (f) => (await client.audio.transcriptions.create({ file: await f, model: MODEL, language: 'en' })).text));
    expect(texts[0]!.length).toBeGreaterThan(0);
    expect(texts[1]).toBe(texts[0]);
    expect(texts[2]).toBe(texts[0]);
  });

  it('gives a transcript for each lossy format', async () => {
    const dir = join(import.meta.dirname, '../fixtures/audio');
    const names = ['tone-440hz.mp3', 'tone-440hz.flac', 'tone-440hz-vorbis.ogg', 'tone-440hz-opus.ogg', 'tone-440hz.webm', 'tone-440hz.m4a'];
    for (const name of names) {
      const bytes = readFileSync(join(dir, name));
      const json = await client.audio.transcriptions.create({ file: await toFile(bytes, name), model: MODEL, language: 'en' });
      expect(json.text.length, name).toBeGreaterThan(0);
    }
  });
});
