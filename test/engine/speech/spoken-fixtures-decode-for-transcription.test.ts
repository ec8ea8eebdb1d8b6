// The spoken fixtures other tests transcribe: speech-en.wav (eSpeak NG, 16 kHz mono, 3.29 s)
// and long-75s.ogg (75 s of sentences with pauses, Ogg Opus), which cuts into three windows
// in its pauses.
import { describe, expect, it } from 'vitest';
import { decodeAudio } from '../../../src/engine/speech/decode-audio.js';
import { audioWindows } from '../../../src/engine/speech/windows.js';
import { audioFixture, rms } from './measure.js';

describe('spoken fixtures', () => {
  it('decodes speech-en.wav to 3.29 s of speech at 16 kHz', async () => {
    const audio = await decodeAudio(audioFixture('speech-en.wav'));
    expect(audio.samples.length).toBe(52594);
    expect(audio.duration).toBeCloseTo(52594 / 16000, 9);
    expect(rms(audio.samples)).toBeGreaterThan(0.05);
  });

  it('decodes long-75s.ogg to 75 s, cut into three windows in its pauses', async () => {
    const audio = await decodeAudio(audioFixture('long-75s.ogg'));
    expect(audio.duration).toBeCloseTo(75, 2);
    const windows = audioWindows(audio.samples);
    expect(windows).toHaveLength(3);
    expect(windows.map((w) => w.end / 16000)).toEqual([29.8, 58.8, 75]);
    for (const w of windows.slice(0, -1)) expect(rms(audio.samples, w.end - 1600, w.end + 1600)).toBeLessThan(0.001);
    for (const w of windows) expect(rms(audio.samples, w.start, w.end)).toBeGreaterThan(0.02);
  });
});
