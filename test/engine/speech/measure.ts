// Measurements of decoded signals for the speech tests.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const AUDIO_FIXTURES = fileURLToPath(new URL('../../fixtures/audio/', import.meta.url));

export function audioFixture(name: string): Uint8Array {
  return new Uint8Array(readFileSync(AUDIO_FIXTURES + name));
}

export function rms(samples: Float32Array, from = 0, to = samples.length): number {
  let sum = 0;
  for (let i = from; i < to; i++) sum += samples[i] * samples[i];
  return Math.sqrt(sum / Math.max(1, to - from));
}

/** The amplitude of the `hz` component of `samples` (a single-bin DFT over whole stretch). */
export function toneAmplitude(samples: Float32Array, hz: number, rate: number, from = 0, to = samples.length): number {
  let re = 0;
  let im = 0;
  for (let i = from; i < to; i++) {
    const phase = (2 * Math.PI * hz * i) / rate;
    re += samples[i] * Math.cos(phase);
    im += samples[i] * Math.sin(phase);
  }
  return (2 * Math.hypot(re, im)) / (to - from);
}
