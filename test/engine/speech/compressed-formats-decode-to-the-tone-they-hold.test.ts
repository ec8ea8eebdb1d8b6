// Each compressed fixture (test/fixtures/audio/README.md: 2 s of a 440 Hz sine at amplitude
// 0.5, 48 kHz stereo, encoded by ffmpeg) decodes to about 2 s at 16 kHz holding that tone.
import { describe, expect, it } from 'vitest';
import { detectAudioFormat } from '../../../src/engine/speech/audio-format.js';
import { decodeAudio } from '../../../src/engine/speech/decode-audio.js';
import { audioFixture, rms, toneAmplitude } from './measure.js';

const FILES: [file: string, format: string, seconds: number][] = [
  ['tone-440hz.flac', 'flac', 2],
  ['tone-440hz.mp3', 'mp3', 2],
  ['tone-440hz-vorbis.ogg', 'ogg-vorbis', 2],
  ['tone-440hz-opus.ogg', 'ogg-opus', 2],
  ['tone-440hz.webm', 'webm', 2],
  ['tone-440hz-streamed.webm', 'webm', 2],
  ['tone-440hz.m4a', 'mp4', 2],
  ['tone-440hz.aac', 'aac', 2],
  ['tone-440hz-3ch-24bit.wav', 'wav', 0.5],
];

describe('decodeAudio on compressed and multichannel files', () => {
  for (const [file, format, seconds] of FILES) {
    it(`decodes ${file} (${format}) to ${seconds} s of the 440 Hz tone`, async () => {
      const bytes = audioFixture(file);
      expect(detectAudioFormat(bytes)).toBe(format);
      const audio = await decodeAudio(bytes);
      expect(audio.sampleRate).toBe(16000);
      // Gapless decoders trim the encoders' priming and padding: within a frame of the source.
      expect(Math.abs(audio.duration - seconds)).toBeLessThan(0.025);
      expect(Math.abs(audio.samples.length - audio.duration * 16000)).toBeLessThanOrEqual(1);
      const inner = [800, audio.samples.length - 800] as const;
      expect(rms(audio.samples, ...inner)).toBeGreaterThan(0.5 / Math.SQRT2 * 0.9);
      expect(rms(audio.samples, ...inner)).toBeLessThan(0.5 / Math.SQRT2 * 1.1);
      expect(toneAmplitude(audio.samples, 440, 16000, ...inner)).toBeGreaterThan(0.45);
    });
  }
});
