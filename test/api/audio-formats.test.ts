// Every response_format of /v1/audio/transcriptions and /v1/audio/translations with a stub
// engine (test/api/stub-engine.ts: two fixed segments of a 4.25 s file, whatever the audio): the
// shape and content type of each, json and verbose_json checked against OpenAI's OpenAPI schemas
// (skipped, with a warning, where ../shared/openai-openapi is absent), srt and vtt parsed back
// into the segments' times and trimmed texts.
import { describe, expect, test } from 'vitest';
import { validateAgainst } from '../helpers/openapi.js';
import { audioFields, setupAudio, WHISPER } from './audio-harness.js';
import { STUB_SEGMENTS, STUB_WORDS } from './stub-engine.js';

const TEXT = 'Hello world. How --> are you?';
const T = '/v1/audio/transcriptions';
const TR = '/v1/audio/translations';

/** Parses SRT or WebVTT cues back into seconds and text. */
function cues(body: string, marker: ',' | '.') {
  const time = (t: string) => {
    const [h, m, rest] = t.split(':');
    const [s, ms] = rest!.split(marker);
    return Number(h) * 3600 + Number(m) * 60 + Number(s) + Number(ms) / 1000;
  };
  const re = marker === ',' ? /^(\d+)\n(\d\d:\d\d:\d\d,\d{3}) --> (\d\d:\d\d:\d\d,\d{3})\n(.*)$/ : /^(\d\d:\d\d:\d\d\.\d{3}) --> (\d\d:\d\d:\d\d\.\d{3})\n(.*)$/;
  return body
    .split('\n\n')
    .filter(Boolean)
    .map((block) => {
      const m = re.exec(block);
      expect(m, block).not.toBeNull();
      const [n, a, b, text] = marker === ',' ? m!.slice(1) : [undefined, ...m!.slice(1)];
      return { ...(n !== undefined ? { n: Number(n) } : {}), start: time(a!), end: time(b!), text };
    });
}

describe('transcriptions in every response_format with a stub engine', () => {
  test('json (the default) is {text, usage: duration in whole seconds rounded up}, as application/json', async () => {
    const { postForm } = setupAudio();
    const res = await postForm(T, audioFields());
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('x-request-id')).toBeTruthy();
    const body = await res.json();
    expect(body).toEqual({ text: TEXT, usage: { type: 'duration', seconds: 5 } });
    expect(validateAgainst('CreateTranscriptionResponseJson', body)).toEqual([]);
  });

  test('json with include[]=logprobs carries each token with its logprob and bytes', async () => {
    const { postForm, engine } = setupAudio();
    const body = await (await postForm(T, audioFields({ 'include[]': 'logprobs' }))).json();
    expect(engine.transcribeCalls[0]!.logprobs).toBe(true);
    expect(body.logprobs).toHaveLength(6);
    expect(body.logprobs[0]).toEqual({ token: ' Hello', logprob: -0.2, bytes: [32, 72, 101, 108, 108, 111] });
    expect(validateAgainst('CreateTranscriptionResponseJson', body)).toEqual([]);
  });

  test('verbose_json carries task, language, duration, text, every segment and usage; words only when asked', async () => {
    const { postForm, engine } = setupAudio();
    const body = await (await postForm(T, audioFields({ response_format: 'verbose_json' }))).json();
    expect(engine.transcribeCalls[0]!.timestamps).toBe('segment');
    expect(body).toEqual({ task: 'transcribe', language: 'english', duration: 4.25, text: TEXT, segments: STUB_SEGMENTS, usage: { type: 'duration', seconds: 5 } });
    expect(validateAgainst('CreateTranscriptionResponseVerboseJson', body)).toEqual([]);

    const withWords = await (await postForm(T, audioFields({ response_format: 'verbose_json', 'timestamp_granularities[]': ['word', 'segment'] }))).json();
    expect(engine.transcribeCalls[1]!.timestamps).toBe('word');
    expect(withWords.words).toEqual(STUB_WORDS);
    expect(withWords.segments).toEqual(STUB_SEGMENTS);
    expect(validateAgainst('CreateTranscriptionResponseVerboseJson', withWords)).toEqual([]);
  });

  test('text is the plain transcript as text/plain; charset=utf-8, decoded without timestamps', async () => {
    const { postForm, engine } = setupAudio();
    const res = await postForm(T, audioFields({ response_format: 'text' }));
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await res.text()).toBe(TEXT);
    expect(engine.transcribeCalls[0]!.timestamps).toBe('none');
  });

  test('srt is numbered HH:MM:SS,mmm blocks of the segments, texts trimmed, as text/plain', async () => {
    const { postForm } = setupAudio();
    const res = await postForm(T, audioFields({ response_format: 'srt' }));
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    const body = await res.text();
    expect(body).toBe('1\n00:00:00,000 --> 00:00:02,500\nHello world.\n\n2\n00:00:02,500 --> 00:00:04,200\nHow -> are you?\n\n');
    expect(cues(body, ',')).toEqual(STUB_SEGMENTS.map((s, i) => ({ n: i + 1, start: s.start, end: s.end, text: s.text.trim().replace('-->', '->') })));
  });

  test('vtt is a WEBVTT header then HH:MM:SS.mmm cues of the segments, as text/vtt', async () => {
    const { postForm } = setupAudio();
    const res = await postForm(T, audioFields({ response_format: 'vtt' }));
    expect(res.headers.get('content-type')).toBe('text/vtt');
    const body = await res.text();
    expect(body.startsWith('WEBVTT\n\n')).toBe(true);
    expect(cues(body.slice('WEBVTT\n\n'.length), '.')).toEqual(STUB_SEGMENTS.map((s) => ({ start: s.start, end: s.end, text: s.text.trim().replace('-->', '->') })));
  });

  test('hands the engine the file, the language, the prompt, the temperature and the server\'s --max-audio-seconds', async () => {
    const { postForm, engine } = setupAudio({ maxAudioSeconds: 600 });
    const fields = audioFields({ language: 'EN', prompt: 'Hello.', temperature: '0.4' });
    expect((await postForm(T, fields)).status).toBe(200);
    const req = engine.transcribeCalls[0]!;
    expect(req).toMatchObject({ model: WHISPER, task: 'transcribe', language: 'en', prompt: 'Hello.', temperature: 0.4, timestamps: 'none', max_seconds: 600 });
    expect(req.audio).toEqual(new Uint8Array(await (fields.file as Blob).arrayBuffer()));
    expect(req.id).toMatch(/^transcript-/);
  });

  test('hands the engine samples the front door decoded, and the file itself when its decoder fails or throws', async () => {
    const samples = new Float32Array([0.1, -0.1]);
    const decoded = setupAudio({ decodeAudio: async () => samples });
    expect((await decoded.postForm(T, audioFields())).status).toBe(200);
    expect(decoded.engine.transcribeCalls[0]!.samples).toEqual(samples);
    expect(decoded.engine.transcribeCalls[0]!.audio).toHaveLength(0);
    for (const decodeAudio of [async () => Promise.reject(new Error('no')), () => { throw new Error('sync'); }]) {
      const s = setupAudio({ decodeAudio: decodeAudio as () => Promise<Float32Array> });
      expect((await s.postForm(T, audioFields())).status).toBe(200);
      expect(s.engine.transcribeCalls[0]!.samples).toBeUndefined();
      expect(s.engine.transcribeCalls[0]!.audio.length).toBeGreaterThan(0);
      expect(s.access.holds.every((h) => h.settled)).toBe(true);
    }
  });

  test('passes keep_alive on as the other model routes do, a form\'s string read as Ollama reads it', async () => {
    const { postForm, engine } = setupAudio();
    expect((await postForm(T, audioFields({ keep_alive: '5m' }))).status).toBe(200);
    expect((await postForm(TR, audioFields({ keep_alive: '0' }))).status).toBe(200);
    expect(engine.transcribeCalls.map((r) => (r as { keep_alive_ms?: number }).keep_alive_ms)).toEqual([300_000, 0]);
    const bad = await postForm(T, audioFields({ keep_alive: 'soon' }));
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.param).toBe('keep_alive');
  });

  test('ignores fields it does not know, as OpenAI does, and takes chunking_strategy "auto"', async () => {
    const { postForm } = setupAudio();
    const res = await postForm(T, audioFields({ user: 'u1', chunking_strategy: 'auto', 'metadata[x]': 'y' }));
    expect(res.status).toBe(200);
  });
});

describe('translations in every response_format with a stub engine', () => {
  test('json is {text} alone; verbose_json has task translate, the source language, segments, no words, no usage', async () => {
    const { postForm, engine } = setupAudio();
    engine.transcribeScript = () => ({ language: 'german' });
    const json = await (await postForm(TR, audioFields())).json();
    expect(json).toEqual({ text: TEXT });
    expect(validateAgainst('CreateTranslationResponseJson', json)).toEqual([]);
    expect(engine.transcribeCalls[0]!).toMatchObject({ task: 'translate', timestamps: 'none' });
    expect(engine.transcribeCalls[0]!.language).toBeUndefined();

    const verbose = await (await postForm(TR, audioFields({ response_format: 'verbose_json' }))).json();
    expect(verbose).toEqual({ task: 'translate', language: 'german', duration: 4.25, text: TEXT, segments: STUB_SEGMENTS });
    expect(validateAgainst('CreateTranslationResponseVerboseJson', verbose)).toEqual([]);
  });

  test('text, srt and vtt come as plain bodies with their content types', async () => {
    const { postForm } = setupAudio();
    const text = await postForm(TR, audioFields({ response_format: 'text' }));
    expect([text.headers.get('content-type'), await text.text()]).toEqual(['text/plain; charset=utf-8', TEXT]);
    const srt = await postForm(TR, audioFields({ response_format: 'srt' }));
    expect(srt.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await srt.text()).toMatch(/^1\n00:00:00,000 --> 00:00:02,500\nHello world\.\n\n2\n/);
    const vtt = await postForm(TR, audioFields({ response_format: 'vtt' }));
    expect(vtt.headers.get('content-type')).toBe('text/vtt');
    expect(await vtt.text()).toMatch(/^WEBVTT\n\n00:00:00\.000 --> 00:00:02\.500\nHello world\.\n\n/);
  });
});
