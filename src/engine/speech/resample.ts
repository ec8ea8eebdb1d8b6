// Resampling to Whisper's 16 kHz with libsamplerate (Erik de Castro Lopo's band-limited sinc
// converter, the reference for audio rate conversion) compiled to WASM by
// @alexanderolsen/libsamplerate-js: MIT, no dependencies, the WASM inlined (so it loads the same in
// Node, a page and a worker, with nothing fetched). Of the others looked at: wave-resampler (pure
// JS, a single release) publishes no stop-band figure, and @echogarden/speex-resampler-wasm ships
// its WASM as separate files that a page's bundler would have to place and Node read from disk.
//
// SRC_SINC_MEDIUM_QUALITY: 97 dB of stop-band attenuation and flat to 7 kHz (-0.3 dB there, Whisper's
// mel filters reach 8 kHz), measured here at 0.9-1.1 s per minute of 44.1 kHz audio on one core:
// an hour of audio takes about a minute (16 kHz input skips it). SRC_SINC_FASTEST halves that but
// is already -3.9 dB at 6.5 kHz and -14 dB at 7 kHz (sibilants); BEST_QUALITY costs 3.6 times
// MEDIUM for a pass band 7% wider.

const TARGET_RATE = 16000;
const SRC_SINC_MEDIUM_QUALITY = 1;

/** `samples` (mono, at `rate` Hz) at 16 kHz; 16 kHz input is returned as it is. */
export async function resampleTo16k(samples: Float32Array, rate: number): Promise<Float32Array> {
  if (rate === TARGET_RATE) return samples;
  const lib = await import('@alexanderolsen/libsamplerate-js');
  // A CommonJS (UMD) module: Node gives its exports as `default` only; a bundler may hoist them.
  const { create } = lib.default ?? lib;
  const want = Math.round((samples.length * TARGET_RATE) / rate);
  const out = new Float32Array(want);
  const src = await create(1, rate, TARGET_RATE, { converterType: SRC_SINC_MEDIUM_QUALITY });
  try {
    // Fed one second at a time through libsamplerate's streaming (`full`) API, which keeps the
    // filter's state between calls: no padded copy of an hour of audio. Its filter holds back
    // its last samples (the output is not delayed, only withheld): 100 ms of silence after the
    // end flushes them, and the output is cut to the source's exact length.
    let written = 0;
    const feed = (chunk: Float32Array) => {
      const got = src.full(chunk);
      const take = Math.min(got.length, want - written);
      out.set(take === got.length ? got : got.subarray(0, take), written);
      written += take;
    };
    const step = Math.max(1, Math.trunc(rate));
    for (let at = 0; at < samples.length; at += step) feed(samples.subarray(at, Math.min(at + step, samples.length)));
    const silence = new Float32Array(Math.ceil(rate / 10));
    for (let i = 0; i < 3 && written < want; i++) feed(silence);
    return out;
  } finally {
    src.destroy();
  }
}
