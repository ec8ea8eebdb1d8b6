// A WAV file made from samples, for tests that upload audio. `samples` is mono, or interleaved
// frames when `channels` > 1; values are in [-1, 1] (clipped there for the integer formats).

export type WavFormat = 'pcm16' | 'pcm8' | 'pcm24' | 'float32';

export interface WavOptions {
  channels?: number;
  format?: WavFormat;
  /** Write WAVE_FORMAT_EXTENSIBLE (0xFFFE) with the format as its sub-format, as many recorders do. */
  extensible?: boolean;
}

const BYTES: Record<WavFormat, number> = { pcm8: 1, pcm16: 2, pcm24: 3, float32: 4 };

export function wavBytes(samples: Float32Array, sampleRate: number, options: WavOptions = {}): Uint8Array {
  const channels = options.channels ?? 1;
  const format = options.format ?? 'pcm16';
  const width = BYTES[format];
  const tag = format === 'float32' ? 3 : 1;
  const fmtSize = options.extensible ? 40 : 16;
  const dataSize = samples.length * width;
  const pad = dataSize % 2;
  const out = new Uint8Array(12 + 8 + fmtSize + 8 + dataSize + pad);
  const view = new DataView(out.buffer);
  const text = (at: number, s: string) => {
    for (let i = 0; i < s.length; i++) out[at + i] = s.charCodeAt(i);
  };
  text(0, 'RIFF');
  view.setUint32(4, out.length - 8, true);
  text(8, 'WAVE');
  text(12, 'fmt ');
  view.setUint32(16, fmtSize, true);
  view.setUint16(20, options.extensible ? 0xfffe : tag, true);
  view.setUint16(22, channels, true);
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * channels * width, true);
  view.setUint16(32, channels * width, true);
  view.setUint16(34, width * 8, true);
  if (options.extensible) {
    view.setUint16(36, 22, true); // cbSize
    view.setUint16(38, width * 8, true); // valid bits per sample
    view.setUint32(40, channels === 1 ? 0x4 : channels === 2 ? 0x3 : 0, true); // channel mask
    // The sub-format GUID: the format tag, then the fixed tail 00000000-0010-8000-00AA00389B71.
    view.setUint32(44, tag, true);
    out.set([0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xaa, 0x00, 0x38, 0x9b, 0x71], 48);
  }
  const dataAt = 20 + fmtSize;
  text(dataAt, 'data');
  view.setUint32(dataAt + 4, dataSize, true);
  let at = dataAt + 8;
  for (const raw of samples) {
    const s = Math.max(-1, Math.min(1, raw));
    if (format === 'float32') view.setFloat32(at, raw, true);
    else if (format === 'pcm8') view.setUint8(at, Math.round(s * 127) + 128);
    else if (format === 'pcm16') view.setInt16(at, Math.round(s * 32767), true);
    else {
      const v = Math.round(s * 8388607);
      view.setUint8(at, v & 0xff);
      view.setUint8(at + 1, (v >> 8) & 0xff);
      view.setUint8(at + 2, (v >> 16) & 0xff);
    }
    at += width;
  }
  return out;
}

/** `seconds` of a sine at `hz` sampled at `sampleRate`, as `channels` identical channels interleaved. */
export function tone(hz: number, seconds: number, sampleRate: number, amplitude = 0.5, channels = 1): Float32Array {
  const frames = Math.round(seconds * sampleRate);
  const out = new Float32Array(frames * channels);
  for (let i = 0; i < frames; i++) {
    const v = amplitude * Math.sin((2 * Math.PI * hz * i) / sampleRate);
    for (let c = 0; c < channels; c++) out[i * channels + c] = v;
  }
  return out;
}
