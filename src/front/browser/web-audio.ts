// The page's own audio decoder for uploads: Web Audio's decodeAudioData, which exists on the
// page thread (not in workers) and decodes whatever the browser plays (wav, mp3, AAC/m4a, Opus,
// Vorbis, FLAC), resampled by the browser to the context's rate. Whisper takes mono 16 kHz.

const RATE = 16_000;

/** Mono 16 kHz samples of the file; undefined where Web Audio is absent or cannot decode it (the engine's decoders try next). */
export async function decodeWithWebAudio(bytes: Uint8Array): Promise<Float32Array | undefined> {
  const Context = (globalThis as { OfflineAudioContext?: typeof OfflineAudioContext }).OfflineAudioContext;
  if (!Context || bytes.length === 0) return undefined;
  // decodeAudioData resamples to its context's rate; the context itself never renders.
  const context = new Context(1, 1, RATE);
  const buffer = await context.decodeAudioData(bytes.slice().buffer);
  if (buffer.length === 0) return undefined;
  const mono = new Float32Array(buffer.length);
  for (let c = 0; c < buffer.numberOfChannels; c++) {
    const channel = buffer.getChannelData(c);
    for (let i = 0; i < mono.length; i++) mono[i]! += channel[i]! / buffer.numberOfChannels;
  }
  return mono;
}
