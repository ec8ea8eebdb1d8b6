// The same signal written as WAV at other rates, channel counts and sample formats decodes to
// the same 16 kHz mono samples as its 16 kHz mono 16-bit original, and to the source's duration.
import { describe, expect, it } from 'vitest';
import { decodeAudio } from '../../../src/engine/speech/decode-audio.js';
import { wavBytes, type WavFormat } from '../../helpers/wav.js';

const SECONDS = 1.5;

/** A few tones under 7 kHz (inside the resampler's pass band), as a function of time. */
const signal = (t: number) => 0.3 * Math.sin(2 * Math.PI * 300 * t) + 0.2 * Math.sin(2 * Math.PI * 1000 * t + 1) + 0.1 * Math.sin(2 * Math.PI * 3100 * t + 2);

function sampled(rate: number, channels = 1): Float32Array {
  const frames = Math.round(SECONDS * rate);
  const out = new Float32Array(frames * channels);
  for (let i = 0; i < frames; i++) for (let c = 0; c < channels; c++) out[i * channels + c] = signal(i / rate);
  return out;
}

/** The largest difference from the reference, away from the first and last 20 ms (where the resampler's filter meets the file's edges). */
function maxDifference(a: Float32Array, b: Float32Array): number {
  expect(a.length).toBe(b.length);
  let max = 0;
  for (let i = 320; i < a.length - 320; i++) max = Math.max(max, Math.abs(a[i] - b[i]));
  return max;
}

describe('decodeAudio on WAV', () => {
  const cases: { name: string; rate: number; channels?: number; format?: WavFormat; extensible?: boolean; tolerance: number }[] = [
    { name: '44.1 kHz stereo 16-bit', rate: 44100, channels: 2, tolerance: 2e-3 },
    { name: '48 kHz mono 16-bit', rate: 48000, tolerance: 2e-3 },
    { name: '22.05 kHz 4 channels 16-bit', rate: 22050, channels: 4, tolerance: 2e-3 },
    { name: '16 kHz mono 8-bit', rate: 16000, format: 'pcm8', tolerance: 1e-2 },
    { name: '16 kHz mono 24-bit', rate: 16000, format: 'pcm24', tolerance: 1e-4 },
    { name: '16 kHz mono float32', rate: 16000, format: 'float32', tolerance: 1e-4 },
    { name: '48 kHz stereo float32, WAVE_FORMAT_EXTENSIBLE', rate: 48000, channels: 2, format: 'float32', extensible: true, tolerance: 2e-3 },
    { name: '8 kHz stereo 24-bit, WAVE_FORMAT_EXTENSIBLE', rate: 8000, channels: 2, format: 'pcm24', extensible: true, tolerance: 2e-3 },
  ];

  it('passes a 16 kHz mono file through at its exact length and duration', async () => {
    const ref = await decodeAudio(wavBytes(sampled(16000), 16000));
    expect(ref.sampleRate).toBe(16000);
    expect(ref.samples.length).toBe(SECONDS * 16000);
    expect(ref.duration).toBe(SECONDS);
    const source = sampled(16000);
    let max = 0;
    for (let i = 0; i < source.length; i++) max = Math.max(max, Math.abs(ref.samples[i] - source[i]));
    expect(max).toBeLessThan(1 / 32767);
  });

  for (const c of cases) {
    it(`decodes ${c.name} to the same 16 kHz samples`, async () => {
      const ref = await decodeAudio(wavBytes(sampled(16000), 16000));
      const channels = c.channels ?? 1;
      const got = await decodeAudio(wavBytes(sampled(c.rate, channels), c.rate, { channels, format: c.format, extensible: c.extensible }));
      expect(got.duration).toBeCloseTo(SECONDS, 9);
      expect(maxDifference(got.samples, ref.samples)).toBeLessThan(c.tolerance);
    });
  }

  it('averages the channels when down-mixing', async () => {
    const rate = 16000;
    const frames = new Float32Array(2 * rate);
    for (let i = 0; i < rate; i++) {
      frames[2 * i] = 0.5;
      frames[2 * i + 1] = -0.1;
    }
    const got = await decodeAudio(wavBytes(frames, rate, { channels: 2, format: 'float32' }));
    expect(got.samples.length).toBe(rate);
    expect(got.samples[100]).toBeCloseTo(0.2, 6);
  });
});
