// Resampling to Whisper's 16 kHz with libsamplerate (Erik de Castro Lopo's band-limited sinc
// converter, the reference for audio rate conversion) compiled to WASM by
// @alexanderolsen/libsamplerate-js: MIT, no dependencies, the WASM inlined (so it loads the same in
// Node, a page and a worker, with nothing fetched). JS resamplers on npm (wave-resampler and the
// like) are linear/cubic or filter with short windows, and alias what lies above 8 kHz into the
// band Whisper hears.
//
// SRC_SINC_MEDIUM_QUALITY: 97 dB of stop-band attenuation and a pass band to 90% of the output's
// Nyquist (7.2 kHz of 8 kHz; Whisper's mel filters reach 8 kHz, speech's energy lies far below),
// about 0.85 s per minute of 44.1 kHz audio on one core here; BEST_QUALITY's 97% costs 3.6 times
// that, which for an hour of audio is minutes.

const TARGET_RATE = 16000;
const SRC_SINC_MEDIUM_QUALITY = 1;

/** `samples` (mono, at `rate` Hz) at 16 kHz; 16 kHz input is returned as it is. */
export async function resampleTo16k(samples: Float32Array, rate: number): Promise<Float32Array> {
  if (rate === TARGET_RATE) return samples;
  const lib = await import('@alexanderolsen/libsamplerate-js');
  // A CommonJS (UMD) module: Node gives its exports as `default` only; a bundler may hoist them.
  const { create } = lib.default ?? lib;
  const want = Math.round((samples.length * TARGET_RATE) / rate);
  // libsamplerate keeps its filter's tail: fed 100 ms of silence after the end, it flushes the
  // last samples, and the output is cut to the source's exact length (it is not delayed).
  const padded = new Float32Array(samples.length + Math.ceil(rate / 10));
  padded.set(samples);
  const src = await create(1, rate, TARGET_RATE, { converterType: SRC_SINC_MEDIUM_QUALITY });
  try {
    const out = src.simple(padded);
    if (out.length >= want) return out.slice(0, want);
    const full = new Float32Array(want);
    full.set(out);
    return full;
  } finally {
    src.destroy();
  }
}
