// The pieces under the audio routes: a multipart form read into fields as the openai SDK writes
// them (`key[]` lists, the bare repeated spelling, `key[sub]` objects, a field sent twice), and
// SRT/WebVTT timestamps as openai-whisper's format_timestamp writes them.
import { describe, expect, test } from 'vitest';
import { formatTimestamp, toSrt, toVtt } from '../../src/api/audio/subtitles.js';
import { formFields } from '../../src/api/schemas/audio.js';

function form(entries: [string, string | Blob][]): FormData {
  const f = new FormData();
  for (const [k, v] of entries) f.append(k, v);
  return f;
}

describe('a form read into fields', () => {
  test('reads `key[]` and the bare repeated `key` of a list field alike, and a single bare value as a list', () => {
    expect(formFields(form([['timestamp_granularities[]', 'word'], ['timestamp_granularities[]', 'segment']]))).toEqual({ timestamp_granularities: ['word', 'segment'] });
    expect(formFields(form([['timestamp_granularities', 'word'], ['timestamp_granularities', 'segment']]))).toEqual({ timestamp_granularities: ['word', 'segment'] });
    expect(formFields(form([['include', 'logprobs']]))).toEqual({ include: ['logprobs'] });
  });

  test('keeps scalars as strings, a file as its File, `key[sub]` as an object and a repeated scalar as an array', () => {
    const f = formFields(form([['model', 'm'], ['temperature', '0.5'], ['file', new Blob(['x'])], ['chunking_strategy[type]', 'server_vad'], ['prompt', 'a'], ['prompt', 'b']]));
    expect(f.model).toBe('m');
    expect(f.temperature).toBe('0.5');
    expect(f.file).toBeInstanceOf(Blob);
    expect(f.chunking_strategy).toEqual({ type: 'server_vad' });
    expect(f.prompt).toEqual(['a', 'b']);
  });
});

describe('subtitle timestamps and cues', () => {
  test('write hours, minutes, seconds and milliseconds, rounded to the millisecond', () => {
    expect(formatTimestamp(0, ',')).toBe('00:00:00,000');
    expect(formatTimestamp(2.5, ',')).toBe('00:00:02,500');
    expect(formatTimestamp(3661.0016, '.')).toBe('01:01:01.002');
    expect(formatTimestamp(59.9996, '.')).toBe('00:01:00.000');
    expect(formatTimestamp(36_000, ',')).toBe('10:00:00,000');
  });

  test('trim each text and keep "-->" out of it; no segments is an empty SRT and a bare WEBVTT header', () => {
    const segs = [{ start: 0, end: 1, text: '  a --> b ' }];
    expect(toSrt(segs)).toBe('1\n00:00:00,000 --> 00:00:01,000\na -> b\n\n');
    expect(toVtt(segs)).toBe('WEBVTT\n\n00:00:00.000 --> 00:00:01.000\na -> b\n\n');
    expect(toSrt([])).toBe('');
    expect(toVtt([])).toBe('WEBVTT\n\n');
  });
});
