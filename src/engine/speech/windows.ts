// Long audio is cut into windows of at most 30 s (Whisper's input) the way vLLM cuts it
// (its audio utilities' split_audio and find_split_point, which its transcription endpoint calls
// with max_clip_duration_s 30, overlap_duration_s 1 and min_energy_window_size 1600 at 16 kHz), so
// that the same audio gives the same windows on both servers.
//
// From the previous cut c (0 at first): when no more than 30 s remain, the rest is the last
// window. Otherwise the next cut is the start of the quietest 100 ms window (RMS; the first of
// equals wins) among those starting at c + 29.0, c + 29.1, … s. vLLM's loop,
// `range(0, len(segment) - window, window)` over the 1 s segment [c + 29, c + 30), stops before
// the window at c + 29.9 (which would end exactly at c + 30): the candidates are the nine
// starting at c + 29.0 … c + 29.8, and so they are here.

export interface AudioWindow {
  /** First sample, inclusive. */
  start: number;
  /** Last sample, exclusive. */
  end: number;
}

/** The windows covering `samples` in order, without gaps or overlaps. Empty audio has none. */
export function audioWindows(samples: Float32Array, sampleRate = 16000): AudioWindow[] {
  const chunk = Math.trunc(sampleRate * 30);
  const overlap = Math.trunc(sampleRate * 1);
  // vLLM's 1600 samples is 100 ms at 16 kHz; at another rate the window keeps its 100 ms.
  const energyWindow = Math.trunc(sampleRate / 10);
  const windows: AudioWindow[] = [];
  let cut = 0;
  while (cut < samples.length) {
    if (cut + chunk >= samples.length) {
      windows.push({ start: cut, end: samples.length });
      break;
    }
    const next = quietestStart(samples, cut + chunk - overlap, cut + chunk, energyWindow);
    windows.push({ start: cut, end: next });
    cut = next;
  }
  return windows;
}

/** The start of the quietest `window`-sample stretch on the grid from `from`, before `to` - window. */
function quietestStart(samples: Float32Array, from: number, to: number, window: number): number {
  // vLLM starts from index 0, which NaN samples (no window compares below Infinity) would turn
  // into an endless loop; the grid's first point keeps the cut moving forward.
  let best = from;
  let bestEnergy = Infinity;
  for (let i = 0; i < to - from - window; i += window) {
    let sum = 0;
    for (let j = from + i; j < from + i + window; j++) sum += samples[j]! * samples[j]!;
    const rms = Math.sqrt(sum / window);
    if (rms < bestEnergy) {
      bestEnergy = rms;
      best = from + i;
    }
  }
  return best;
}
