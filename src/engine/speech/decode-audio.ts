// An uploaded audio file as Whisper's input: mono samples at 16 kHz. The decode path uses no
// Node API (bytes in, typed arrays out, WASM decoders loaded by dynamic import), so it runs the
// same in the server, in the page and in a Web Worker.

import { EngineError } from '../errors.js';
import { detectAudioFormat } from './audio-format.js';
import { AudioFileError, FORMAT_DECODERS, type DecodedChannels } from './format-decoders.js';
import { resampleTo16k } from './resample.js';

export interface DecodedAudio {
  /** Mono, 16 kHz. */
  samples: Float32Array;
  sampleRate: 16000;
  /** The source's exact length in seconds (its sample count over its own rate). */
  duration: number;
}

const invalidFile = (message: string): EngineError => new EngineError('invalid_value', message, 'file');

/**
 * Decodes wav, flac, mp3, ogg (Vorbis, Opus), webm (Opus) and m4a/AAC, told apart by their first
 * bytes, down-mixes to mono and resamples to 16 kHz. A file that is none of these, that the
 * decoder rejects, or that holds no samples, throws EngineError('invalid_value', …, 'file').
 */
export async function decodeAudio(bytes: Uint8Array): Promise<DecodedAudio> {
  const format = detectAudioFormat(bytes);
  if (!format) {
    throw invalidFile('The file is not audio that can be decoded: expected wav, flac, mp3, ogg (Vorbis or Opus), webm (Opus) or m4a (AAC).');
  }
  let decoded: DecodedChannels;
  try {
    decoded = await FORMAT_DECODERS[format](bytes);
  } catch (e) {
    const why = e instanceof AudioFileError ? e.message : `the ${format} decoder failed: ${e instanceof Error ? e.message : String(e)}`;
    throw invalidFile(`The file could not be decoded as ${format} audio: ${why}.`);
  }
  const mono = downmix(decoded.channelData);
  if (mono.length === 0 || !(decoded.sampleRate > 0)) {
    throw invalidFile(`The file holds no audio: it decoded as ${format} to zero samples (empty, or cut short before the first frame).`);
  }
  return {
    samples: await resampleTo16k(mono, decoded.sampleRate),
    sampleRate: 16000,
    duration: mono.length / decoded.sampleRate,
  };
}

/** The average of the channels, over the shortest one's length (for stereo what ffmpeg's `-ac 1`, Whisper's loader, gives). */
export function downmix(channels: Float32Array[]): Float32Array {
  if (channels.length === 0) return new Float32Array(0);
  if (channels.length === 1) return channels[0]!;
  const length = Math.min(...channels.map((c) => c.length));
  const out = new Float32Array(length);
  for (const channel of channels) for (let i = 0; i < length; i++) out[i]! += channel[i]!;
  const scale = 1 / channels.length;
  for (let i = 0; i < length; i++) out[i]! *= scale;
  return out;
}
