// The longest an uploaded file can play, known before it is decoded, for the hold on the
// spending cap (the exact duration is known only once the engine has decoded it). Compressed
// formats bound nothing (an Opus stream can carry minutes in kilobytes), so the bound is the
// server's --max-audio-seconds, past which the engine refuses the file. An uncompressed WAV
// (PCM or float, plain or WAVE_FORMAT_EXTENSIBLE) cannot hold more frames than its bytes over
// one frame's bytes: at `rate` frames a second and at least `bytesPerSample` bytes a frame (one
// channel, the fewest there can be), the file's whole length over `rate × bytesPerSample`
// seconds is an upper bound even when its header lies about the data chunk's size.

const PCM = 1;
const FLOAT = 3;
const EXTENSIBLE = 0xfffe;

/** Seconds `bytes` can play at most: a WAV's bound from its header, never more than `maxSeconds`. */
export function audioSecondsBound(bytes: Uint8Array, maxSeconds: number): number {
  const wav = wavFormat(bytes);
  if (!wav) return maxSeconds;
  // One second more: a decoder that rounds its last frame up never passes the bound.
  return Math.min(maxSeconds, Math.ceil(bytes.length / (wav.rate * wav.bytesPerSample)) + 1);
}

const ascii = (b: Uint8Array, at: number) => String.fromCharCode(b[at]!, b[at + 1]!, b[at + 2]!, b[at + 3]!);

/** A RIFF/WAVE file's sample rate and bytes a sample, when it is PCM or float; undefined otherwise. */
export function wavFormat(b: Uint8Array): { rate: number; bytesPerSample: number } | undefined {
  if (b.length < 12 || ascii(b, 0) !== 'RIFF' || ascii(b, 8) !== 'WAVE') return undefined;
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  for (let at = 12; at + 8 <= b.length; ) {
    const size = view.getUint32(at + 4, true);
    if (ascii(b, at) === 'fmt ') {
      if (size < 16 || at + 8 + 16 > b.length) return undefined;
      const f = at + 8;
      let tag = view.getUint16(f, true);
      // WAVE_FORMAT_EXTENSIBLE: the real format is the first two bytes of the sub-format GUID.
      if (tag === EXTENSIBLE) tag = size >= 26 && f + 26 <= b.length ? view.getUint16(f + 24, true) : 0;
      const rate = view.getUint32(f + 4, true);
      const bits = view.getUint16(f + 14, true);
      if ((tag !== PCM && tag !== FLOAT) || rate < 1 || bits < 1) return undefined;
      return { rate, bytesPerSample: Math.ceil(bits / 8) };
    }
    at += 8 + size + (size & 1); // chunks are padded to an even length
  }
  return undefined;
}
