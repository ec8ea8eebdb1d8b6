// Resampling to 16 kHz is band-limited: a tone above the new Nyquist (8 kHz) is removed rather
// than folded back into the band Whisper hears, and one well inside it keeps its amplitude.
import { describe, expect, it } from 'vitest';
import { resampleTo16k } from '../../../src/engine/speech/resample.js';
import { tone } from '../../helpers/wav.js';
import { rms, toneAmplitude } from './measure.js';

describe('resampleTo16k', () => {
  for (const rate of [44100, 48000, 22050]) {
    it(`removes a 10 kHz tone from ${rate} Hz audio`, async () => {
      const out = await resampleTo16k(tone(10000, 1, rate, 0.5), rate);
      expect(out.length).toBe(16000);
      // 0.5 in, under a thousandth out (-60 dB) away from the edges; a resampler without a
      // low-pass filter would leave it as a 6 kHz alias of about the same amplitude.
      expect(rms(out, 800, 15200)).toBeLessThan(5e-4);
      expect(toneAmplitude(out, 6000, 16000, 800, 15200)).toBeLessThan(5e-4);
    });

    it(`keeps a 1 kHz tone from ${rate} Hz audio at its amplitude`, async () => {
      const out = await resampleTo16k(tone(1000, 1, rate, 0.5), rate);
      expect(out.length).toBe(16000);
      expect(toneAmplitude(out, 1000, 16000, 800, 15200)).toBeCloseTo(0.5, 3);
      // And in phase: sample i is the tone at i / 16000 s (the resampler adds no delay).
      let max = 0;
      for (let i = 800; i < 15200; i++) max = Math.max(max, Math.abs(out[i] - 0.5 * Math.sin((2 * Math.PI * 1000 * i) / 16000)));
      expect(max).toBeLessThan(1e-3);
    });
  }

  it('returns 16 kHz input untouched', async () => {
    const input = tone(1000, 0.5, 16000);
    expect(await resampleTo16k(input, 16000)).toBe(input);
  });

  it('gives the source length in 16 kHz samples, rounded', async () => {
    expect((await resampleTo16k(new Float32Array(44101), 44100)).length).toBe(Math.round((44101 * 16000) / 44100));
    expect((await resampleTo16k(new Float32Array(7), 8000)).length).toBe(14);
  });
});
