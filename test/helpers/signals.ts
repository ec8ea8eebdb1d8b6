// Test audio made in code: 16 kHz mono signals that differ enough for a random-weight Whisper
// to hear them differently.
import { Rng } from '../../models/rng.js';

export const RATE = 16_000;

export function tone(seconds: number, hz: number, amplitude = 0.5, rate = RATE): Float32Array {
  return Float32Array.from({ length: Math.round(seconds * rate) }, (_, i) => amplitude * Math.sin((2 * Math.PI * hz * i) / rate));
}

/** A sweep from `from` to `to` Hz. */
export function chirp(seconds: number, from: number, to: number, amplitude = 0.5, rate = RATE): Float32Array {
  const n = Math.round(seconds * rate);
  return Float32Array.from({ length: n }, (_, i) => {
    const t = i / rate;
    return amplitude * Math.sin(2 * Math.PI * (from * t + ((to - from) * t * t) / (2 * seconds)));
  });
}

export function noise(seconds: number, seed: number, amplitude = 0.3, rate = RATE): Float32Array {
  const rng = new Rng(seed);
  return Float32Array.from({ length: Math.round(seconds * rate) }, () => amplitude * (rng.next() * 2 - 1));
}

export function concat(...parts: Float32Array[]): Float32Array {
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
