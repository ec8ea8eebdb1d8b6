// One decoder per format, each behind a dynamic import so that a page or worker bundle loads
// only the WASM of the formats it meets. All are audiojs's packages (github.com/audiojs/decode):
// maintained, plain ESM, the same in Node, browsers and workers (the WASM is inlined, nothing is
// fetched), one result shape, and gapless: mp3's and AAC's encoder delay and padding are
// trimmed, so durations are the source's. Underneath: wav in JS; flac, vorbis and mp3 by
// eshaz's wasm-audio-decoders (libFLAC, libvorbis, mpg123); Opus by libopus; AAC by FAAD2.
//
// Licences: all MIT except @audio/decode-aac, GPL-2.0 (FAAD2, the only maintained AAC decoder
// in WASM on npm; the alternatives are LGPL/AGPL FFmpeg or FAAD2 builds). So it is an optional
// peer dependency, imported by a name bundlers do not follow (an app's bundle never takes GPL
// code by accident): a Node server that has it installed decodes m4a; without it m4a gets a
// clear error. In the page, Web Audio decodes m4a on the page thread before the engine sees it.

import type { AudioFormat } from './audio-format.js';
import { demuxWebmAudio } from './webm-demux.js';
import { parseOpusHead } from './opus-head.js';

export interface DecodedChannels {
  channelData: Float32Array[];
  sampleRate: number;
}

/** A failure that names what was wrong with the file, for the caller's error message. */
export class AudioFileError extends Error {}

type Decoder = (bytes: Uint8Array) => Promise<DecodedChannels>;

/** A variable, not a literal: bundlers leave the import alone. */
const AAC_DECODER = '@audio/decode-aac';

export const FORMAT_DECODERS: Record<AudioFormat, Decoder> = {
  wav: async (bytes) => (await import('@audio/decode-wav')).default(bytes),
  flac: async (bytes) => (await import('@audio/decode-flac')).default(bytes),
  mp3: async (bytes) => (await import('@audio/decode-mp3')).default(bytes),
  'ogg-vorbis': async (bytes) => (await import('@audio/decode-vorbis')).default(bytes),
  'ogg-opus': async (bytes) => (await import('@audio/decode-opus')).default(bytes),
  webm: decodeWebm,
  mp4: decodeAac,
  aac: decodeAac,
};

async function decodeAac(bytes: Uint8Array): Promise<DecodedChannels> {
  let mod: typeof import('@audio/decode-aac');
  try {
    mod = (await import(/* @vite-ignore */ AAC_DECODER)) as typeof import('@audio/decode-aac');
  } catch {
    throw new AudioFileError(`m4a/AAC audio needs the optional package ${AAC_DECODER} (GPL-2.0), which is not installed: npm install ${AAC_DECODER}`);
  }
  return mod.default(bytes);
}

async function decodeWebm(bytes: Uint8Array): Promise<DecodedChannels> {
  const track = demuxWebmAudio(bytes);
  if (!track) throw new AudioFileError('the WebM file has no audio track');
  if (track.codecId !== 'A_OPUS') throw new AudioFileError(`WebM audio in ${track.codecId || 'an unnamed codec'} is not supported (only Opus)`);
  const head = track.codecPrivate ? parseOpusHead(track.codecPrivate) : null;
  if (!head) throw new AudioFileError('the WebM Opus track has no valid OpusHead');
  const { createOpusDecoder } = await import('@audio/decode-opus/core');
  const decoder = await createOpusDecoder();
  try {
    decoder.configure({ sampleRate: 48000, ...head });
    const out = decoder.decodeFrames(track.frames);
    // DiscardPadding says how much of the last frames is padding (Opus always decodes at 48 kHz).
    const drop = Math.round((track.discardPaddingNs * 48000) / 1e9);
    const keep = Math.max(0, out.samplesDecoded - drop);
    return { channelData: out.channelData.map((c) => c.subarray(0, keep)), sampleRate: 48000 };
  } finally {
    decoder.free();
  }
}
