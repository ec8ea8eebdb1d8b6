// A file that is not decodable audio, or that holds no samples, is refused with
// EngineError('invalid_value', …, 'file') and a message saying what was wrong; a truncated
// file either decodes to what came before the cut or is refused the same way. Never another
// error, a crash or a hang.
import { describe, expect, it } from 'vitest';
import { EngineError } from '../../../src/engine/errors.js';
import { decodeAudio } from '../../../src/engine/speech/decode-audio.js';
import { createRng } from '../../../src/engine/sampling/rng.js';
import { tone, wavBytes } from '../../helpers/wav.js';
import { audioFixture } from './measure.js';

async function refusal(bytes: Uint8Array): Promise<EngineError> {
  try {
    await decodeAudio(bytes);
  } catch (e) {
    expect(e).toBeInstanceOf(EngineError);
    const err = e as EngineError;
    expect(err.code).toBe('invalid_value');
    expect(err.param).toBe('file');
    return err;
  }
  throw new Error('decodeAudio accepted the file');
}

const text = (s: string) => new TextEncoder().encode(s);

describe('decodeAudio refusals', () => {
  it('refuses an empty file, text, and random bytes as not audio', async () => {
    const rng = createRng(46);
    const noise = Uint8Array.from({ length: 4096 }, () => Math.floor(rng() * 256));
    for (const bytes of [new Uint8Array(0), text('hello, this is not audio'), text('{"file": "x.wav"}'), noise]) {
      expect((await refusal(bytes)).message).toMatch(/not audio that can be decoded/);
    }
  });

  it('refuses a WAV with no samples as holding no audio', async () => {
    expect((await refusal(wavBytes(new Float32Array(0), 16000))).message).toMatch(/no audio/);
  });

  it('refuses a WAV whose header is cut off', async () => {
    expect((await refusal(wavBytes(tone(440, 0.1, 16000), 16000).subarray(0, 30))).message).toMatch(/wav/);
  });

  it('refuses a file whose magic bytes promise a format its body does not hold', async () => {
    const rng = createRng(7);
    for (const head of ['RIFF\0\0\0\0WAVE', 'fLaC', 'OggS\0\x02', 'ID3\x04\0\0\0\0\0\0', '\0\0\0\x18ftypM4A ']) {
      const body = Uint8Array.from({ length: 2000 }, () => Math.floor(rng() * 256));
      const bytes = new Uint8Array([...text(head), ...body]);
      try {
        await decodeAudio(bytes);
      } catch (e) {
        expect(e).toBeInstanceOf(EngineError);
        expect((e as EngineError).param).toBe('file');
        continue;
      }
      // A decoder that skips garbage until it finds frames may find none and say so above;
      // accepting noise as audio would be the failure, and reaching here means it did.
      throw new Error(`accepted random bytes after ${JSON.stringify(head)}`);
    }
  });

  for (const file of ['tone-440hz.flac', 'tone-440hz.webm', 'tone-440hz.m4a', 'tone-440hz-opus.ogg', 'tone-440hz.mp3', 'tone-440hz.aac']) {
    it(`decodes ${file} with bytes overwritten at random to audio, or refuses it`, async () => {
      const whole = audioFixture(file);
      const rng = createRng(file.length);
      for (let trial = 0; trial < 6; trial++) {
        const bad = whole.slice();
        // Past the first 8 bytes (so the format is still detected), a few runs of random bytes.
        for (let run = 0; run < 1 + trial; run++) {
          const at = 8 + Math.floor(rng() * (bad.length - 8));
          for (let i = at; i < Math.min(bad.length, at + 1 + Math.floor(rng() * 64)); i++) bad[i] = Math.floor(rng() * 256);
        }
        try {
          const audio = await decodeAudio(bad);
          expect(audio.samples.length).toBeGreaterThan(0);
          expect(audio.samples.every(Number.isFinite)).toBe(true);
        } catch (e) {
          expect(e).toBeInstanceOf(EngineError);
          expect((e as EngineError).param).toBe('file');
        }
      }
    });
  }

  for (const file of ['tone-440hz.flac', 'tone-440hz.aac', 'tone-440hz.mp3', 'tone-440hz-vorbis.ogg', 'tone-440hz-opus.ogg', 'tone-440hz.webm', 'tone-440hz.m4a', 'speech-en.wav']) {
    it(`decodes truncations of ${file} to at most its length, or refuses them`, async () => {
      const whole = audioFixture(file);
      const full = await decodeAudio(whole);
      for (const length of [0, 1, 4, 11, 12, 27, 44, 64, 200, 1000, Math.floor(whole.length / 3), whole.length - 1]) {
        const cut = whole.slice(0, length);
        try {
          const audio = await decodeAudio(cut);
          expect(audio.samples.length).toBeGreaterThan(0);
          expect(audio.duration).toBeLessThanOrEqual(full.duration + 1e-9);
        } catch (e) {
          expect(e).toBeInstanceOf(EngineError);
          expect((e as EngineError).param).toBe('file');
        }
      }
    });
  }
});
