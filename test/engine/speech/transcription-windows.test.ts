// Long audio and concurrency in the engine: a 75 s file is its windows (cut at the quiet points
// before each 30 s) transcribed together, and equals each window sent alone, joined; files sent
// at once equal each alone; streamed deltas join to the text; a cancelled request ends.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeBackend } from '../../../src/backends/node.js';
import { createEngine } from '../../../src/engine/engine.js';
import type { EngineApi, TranscribeRequest } from '../../../src/engine/protocol.js';
import { audioWindows } from '../../../src/engine/speech/windows.js';
import { fixtures } from '../../helpers/fixtures.js';
import { chirp, concat, noise, tone } from '../../helpers/signals.js';

const MODEL = 'svc/tiny-whisper';
let engine: EngineApi;
let n = 0;

const request = (samples: Float32Array, more: Partial<TranscribeRequest> = {}): TranscribeRequest => ({
  id: `w${n++}`, model: MODEL, audio: new Uint8Array(), samples: samples.slice(), task: 'transcribe', language: 'en', temperature: 0, timestamps: 'segment', ...more,
});

beforeAll(async () => {
  const dir = await fixtures();
  engine = createEngine(nodeBackend('cpu'));
  await engine.load([{ id: MODEL, task: 'transcription', class: 'tiny', context_length: 448, source: join(dir, 'tiny-whisper'), price: { input_per_1m: 0, output_per_1m: 0, per_audio_second: 0.0001 } }]);
  for (let i = 0; i < 600 && (await engine.models())[0]!.status === 'starting'; i++) await new Promise((r) => setTimeout(r, 50));
}, 120_000);
afterAll(async () => {
  await engine?.dispose();
});

/** 75 s of changing sound with short silences, so the cuts fall inside the grid's windows. */
function longSignal(): Float32Array {
  const parts: Float32Array[] = [];
  for (let i = 0; i < 15; i++) parts.push(i % 3 === 0 ? chirp(4.7, 200 + 50 * i, 2000) : i % 3 === 1 ? tone(4.7, 300 + 40 * i) : noise(4.7, i), new Float32Array(0.3 * 16_000));
  return concat(...parts);
}

describe('transcription windows and batches', () => {
  it('transcribes a 75 s file as its windows sent alone, joined by one space, with times offset by each window', async () => {
    const samples = longSignal();
    const windows = audioWindows(samples, 16_000);
    expect(windows.length).toBe(3);
    const whole = await engine.transcribe!(request(samples));
    const alone = [];
    for (const w of windows) alone.push(await engine.transcribe!(request(samples.subarray(w.start, w.end))));
    expect(whole.text).toBe(alone.map((r) => r.text).filter(Boolean).join(' '));
    expect(whole.duration).toBeCloseTo(samples.length / 16_000, 6);
    const offsets = windows.map((w) => Math.round((w.start / 16_000) * 100) / 100);
    const shifted = alone.flatMap((r, i) => r.segments.map((s) => ({ text: s.text, start: Math.round((s.start + offsets[i]!) * 100) / 100 })));
    expect(whole.segments.map((s) => ({ text: s.text, start: s.start }))).toEqual(shifted);
    expect(whole.segments.map((s) => s.id)).toEqual(whole.segments.map((_, i) => i));
  });

  it('gives four files sent at once what each gives alone', async () => {
    const files = [tone(2, 440), chirp(3, 200, 3000), noise(1.5, 7), concat(tone(1, 880), noise(1, 3))];
    const alone = [];
    for (const f of files) alone.push((await engine.transcribe!(request(f))).text);
    const together = await Promise.all(files.map((f) => engine.transcribe!(request(f))));
    expect(together.map((r) => r.text)).toEqual(alone);
  });

  it('streams deltas that join to the text, a long file included', async () => {
    for (const samples of [chirp(3, 200, 3000), longSignal()]) {
      const deltas: string[] = [];
      const result = await engine.transcribe!(request(samples), (ev) => deltas.push(ev.delta));
      expect(deltas.length).toBeGreaterThan(1);
      expect(deltas.join('')).toBe(result.text);
    }
  });

  it('ends a cancelled request with the cancelled error', async () => {
    const req = request(longSignal());
    const pending = engine.transcribe!(req);
    await new Promise((r) => setTimeout(r, 50));
    await engine.cancel(req.id);
    await expect(pending).rejects.toMatchObject({ code: 'cancelled' });
  });
});
