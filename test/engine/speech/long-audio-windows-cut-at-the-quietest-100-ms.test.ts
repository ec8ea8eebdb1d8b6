// Audio over 30 s is cut as vLLM cuts it: from the previous cut c, the start of the quietest
// 100 ms window on the grid c + 29.0, c + 29.1, … (vLLM's loop stops at c + 29.8), the first of
// equals; at most 30 s left is the last window. The windows cover the audio without gaps or
// overlaps.
import { describe, expect, it } from 'vitest';
import { audioWindows } from '../../../src/engine/speech/windows.js';
import { createRng } from '../../../src/engine/sampling/rng.js';

const RATE = 16000;

/** `seconds` of noise at amplitude ~0.3, with `silent` [from, to) seconds stretches zeroed. */
function noise(seconds: number, silent: [number, number][] = [], seed = 1): Float32Array {
  const rng = createRng(seed);
  const out = Float32Array.from({ length: Math.round(seconds * RATE) }, () => (rng() - 0.5) * 0.6);
  for (const [from, to] of silent) out.fill(0, Math.round(from * RATE), Math.round(to * RATE));
  return out;
}

function expectCover(windows: { start: number; end: number }[], length: number) {
  expect(windows[0]?.start).toBe(0);
  expect(windows.at(-1)?.end).toBe(length);
  for (let i = 1; i < windows.length; i++) expect(windows[i].start).toBe(windows[i - 1].end);
  for (const w of windows) {
    expect(w.end).toBeGreaterThan(w.start);
    expect(w.end - w.start).toBeLessThanOrEqual(30 * RATE);
  }
}

describe('audioWindows', () => {
  it('cuts a 75 s signal at a silence placed at 29.4 s, exactly there', () => {
    const samples = noise(75, [[29.4, 29.5]]);
    const windows = audioWindows(samples);
    expect(windows[0]).toEqual({ start: 0, end: 29.4 * RATE });
    // The next cut: noise everywhere on the grid 58.4 … 59.2 s, so the quietest window of it.
    expect(windows).toHaveLength(3);
    expect(windows[1].end).toBeGreaterThanOrEqual(windows[1].start + 29 * RATE);
    expect(windows[1].end).toBeLessThanOrEqual(windows[1].start + 29.8 * RATE);
    expect((windows[1].end - windows[1].start) % 1600).toBe(0);
    expectCover(windows, samples.length);
  });

  it('finds the second silence from the first cut, not from 30 s', () => {
    const samples = noise(75, [[29.4, 29.5], [58.6, 58.7]]);
    expect(audioWindows(samples).map((w) => w.end)).toEqual([29.4 * RATE, 58.6 * RATE, 75 * RATE]);
  });

  it('takes the first of equally quiet windows (all silent: c + 29.0 s)', () => {
    const windows = audioWindows(new Float32Array(75 * RATE));
    expect(windows.map((w) => w.end)).toEqual([29 * RATE, 58 * RATE, 75 * RATE]);
  });

  it('does not consider the window at c + 29.9 s, as vLLM does not', () => {
    const samples = noise(45, [[29.9, 30]]);
    const first = audioWindows(samples)[0];
    expect(first.end).not.toBe(29.9 * RATE);
    expect(first.end).toBeLessThanOrEqual(29.8 * RATE);
  });

  it('keeps audio of 30 s or less whole, and cuts 30 s and one sample', () => {
    expect(audioWindows(noise(30))).toEqual([{ start: 0, end: 30 * RATE }]);
    expect(audioWindows(noise(3))).toEqual([{ start: 0, end: 3 * RATE }]);
    expect(audioWindows(new Float32Array(0))).toEqual([]);
    const longer = new Float32Array(30 * RATE + 1).fill(0.1);
    expect(audioWindows(longer)).toEqual([{ start: 0, end: 29 * RATE }, { start: 29 * RATE, end: 30 * RATE + 1 }]);
  });

  it('covers random lengths of noise without gaps or overlaps', () => {
    const rng = createRng(3);
    for (let trial = 0; trial < 12; trial++) {
      const samples = noise(1 + rng() * 200, [], trial);
      expectCover(audioWindows(samples), samples.length);
    }
  });

  it('moves forward through NaN samples', () => {
    const samples = new Float32Array(65 * RATE).fill(Number.NaN);
    expectCover(audioWindows(samples), samples.length);
  });
});
