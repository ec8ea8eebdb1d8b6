// Which container or codec an uploaded audio file holds, told by its first bytes. A client's
// file name and content type are not trusted (the openai SDK names a Buffer "file" and sends
// application/octet-stream), so the bytes decide.

export type AudioFormat = 'wav' | 'flac' | 'mp3' | 'aac' | 'ogg-vorbis' | 'ogg-opus' | 'webm' | 'mp4';

const ascii = (bytes: Uint8Array, at: number, text: string): boolean => {
  if (at + text.length > bytes.length) return false;
  for (let i = 0; i < text.length; i++) if (bytes[at + i] !== text.charCodeAt(i)) return false;
  return true;
};

/** The format of `bytes`, or null when it is none that Hearth decodes. */
export function detectAudioFormat(bytes: Uint8Array): AudioFormat | null {
  if ((ascii(bytes, 0, 'RIFF') || ascii(bytes, 0, 'RF64') || ascii(bytes, 0, 'BW64')) && ascii(bytes, 8, 'WAVE')) return 'wav';
  if (ascii(bytes, 0, 'OggS')) return oggCodec(bytes);
  if (bytes.length >= 4 && bytes[0] === 0x1a && bytes[1] === 0x45 && bytes[2] === 0xdf && bytes[3] === 0xa3) return 'webm';
  // An ISO BMFF file starts with a box whose type is at byte 4: `ftyp` (m4a, mp4, 3gp, mov), or for
  // old QuickTime files a `moov`, `wide`, `free` or `mdat` box.
  if (['ftyp', 'moov', 'wide', 'free', 'mdat'].some((box) => ascii(bytes, 4, box))) return 'mp4';
  const start = afterId3(bytes);
  if (ascii(bytes, start, 'fLaC')) return 'flac';
  return mpegSync(bytes, start);
}

/** The offset past ID3v2 tags (mp3, and sometimes flac or ADTS files carry them in front). */
function afterId3(bytes: Uint8Array): number {
  let at = 0;
  while (ascii(bytes, at, 'ID3') && at + 10 <= bytes.length) {
    const size = ((bytes[at + 6]! & 0x7f) << 21) | ((bytes[at + 7]! & 0x7f) << 14) | ((bytes[at + 8]! & 0x7f) << 7) | (bytes[at + 9]! & 0x7f);
    const footer = bytes[at + 5]! & 0x10 ? 10 : 0;
    at += 10 + size + footer;
  }
  return at;
}

/**
 * An MPEG audio frame header at `at`: 11 sync bits, then the layer. Layer bits 00 mark ADTS
 * (AAC); 01–11 are MPEG layers III–I, all decoded by mpg123. The version and layer bits must
 * not be the reserved values, so random bytes that happen to start with 0xFF rarely pass.
 */
function mpegSync(bytes: Uint8Array, at: number): AudioFormat | null {
  if (at + 4 > bytes.length || bytes[at] !== 0xff || (bytes[at + 1]! & 0xe0) !== 0xe0) return null;
  const b1 = bytes[at + 1]!;
  const layer = (b1 >> 1) & 3;
  if (layer === 0) return (b1 & 0xf0) === 0xf0 ? 'aac' : null;
  const version = (b1 >> 3) & 3;
  const bitrate = bytes[at + 2]! >> 4;
  const rate = (bytes[at + 2]! >> 2) & 3;
  if (version === 1 || bitrate === 15 || rate === 3) return null;
  return 'mp3';
}

/** An Ogg stream's codec, from the first packet of its first page. */
function oggCodec(bytes: Uint8Array): AudioFormat | null {
  if (bytes.length < 27) return null;
  const segments = bytes[26]!;
  const body = 27 + segments;
  if (ascii(bytes, body, 'OpusHead')) return 'ogg-opus';
  if (bytes[body] === 1 && ascii(bytes, body + 1, 'vorbis')) return 'ogg-vorbis';
  return null;
}
