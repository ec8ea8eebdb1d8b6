// Each token's time in a window, from the decoder's cross-attention to the audio: the alignment
// heads' weights normalised over the tokens, median-filtered over time, averaged, and aligned
// by dynamic time warping (openai-whisper's find_alignment; transformers.js's
// _extract_token_timestamps, whose medianFilter and dynamic_time_warping this follows).

/**
 * `weights[head][position]` is one alignment head's attention of each fed position (prompt
 * tokens, then every sampled token but the last) over the window's frames, already cropped to
 * the audio's frames. Returns one time (seconds) per sampled token: the prompt's `promptLength`
 * positions are left out, and the last token (never fed back) takes the time before it.
 */
export function tokenTimes(weights: Float32Array[][], promptLength: number, medianWidth: number, precision = 0.02): number[] {
  const heads = weights.length;
  const positions = weights[0]?.length ?? 0;
  const frames = weights[0]?.[0]?.length ?? 0;
  if (heads === 0 || positions <= promptLength || frames === 0) return [];
  const text = positions - promptLength;
  // Mean over the kept heads of each normalised, smoothed row.
  const matrix = Array.from({ length: text }, () => new Float64Array(frames));
  for (const head of weights) {
    const mean = new Float64Array(frames);
    const sq = new Float64Array(frames);
    for (const row of head) for (let f = 0; f < frames; f++) mean[f] += row[f]!;
    for (let f = 0; f < frames; f++) mean[f] /= positions;
    for (const row of head) for (let f = 0; f < frames; f++) sq[f] += (row[f]! - mean[f]!) ** 2;
    const std = sq.map((v) => Math.sqrt(v / positions));
    for (let p = promptLength; p < positions; p++) {
      const row = new Float32Array(frames);
      for (let f = 0; f < frames; f++) row[f] = (head[p]![f]! - mean[f]!) / std[f]!;
      const smooth = medianFilter(row, medianWidth);
      const out = matrix[p - promptLength]!;
      for (let f = 0; f < frames; f++) out[f] += smooth[f]! / heads;
    }
  }
  const [textIndices, timeIndices] = dynamicTimeWarping(matrix.map((r) => Array.from(r, (v) => -v)));
  const times: number[] = [];
  for (let i = 0; i < textIndices.length; i++) {
    if (i === 0 || textIndices[i] !== textIndices[i - 1]) times.push(timeIndices[i]! * precision);
  }
  // The last sampled token (EOS or the window's last) was never fed: it takes the time before it.
  if (times.length > 0) times.push(times.at(-1)!);
  return times;
}

/** Mirrored at the edges, as transformers.js's medianFilter (a Float32Array's numeric sort). */
export function medianFilter(data: Float32Array, width: number): Float32Array {
  if (width % 2 === 0 || width <= 0) throw new Error('the median filter width must be a positive odd number');
  const out = new Float32Array(data.length);
  const buffer = new Float32Array(width);
  const half = Math.floor(width / 2);
  for (let i = 0; i < data.length; i++) {
    let k = 0;
    for (let j = -half; j <= half; j++) {
      let index = i + j;
      if (index < 0) index = Math.abs(index);
      else if (index >= data.length) index = 2 * (data.length - 1) - index;
      buffer[k++] = data[index]!;
    }
    buffer.sort();
    out[i] = buffer[half]!;
  }
  return out;
}

/** The cheapest monotonic path through `matrix` ([text][time]): the indices it visits, in order. */
export function dynamicTimeWarping(matrix: number[][]): [number[], number[]] {
  const n = matrix.length;
  const m = matrix[0]!.length;
  const cost = Array.from({ length: n + 1 }, () => new Float64Array(m + 1).fill(Infinity));
  const trace = Array.from({ length: n + 1 }, () => new Int8Array(m + 1).fill(-1));
  cost[0]![0] = 0;
  for (let j = 1; j <= m; j++) {
    for (let i = 1; i <= n; i++) {
      const c0 = cost[i - 1]![j - 1]!;
      const c1 = cost[i - 1]![j]!;
      const c2 = cost[i]![j - 1]!;
      let c: number;
      let t: number;
      if (c0 < c1 && c0 < c2) [c, t] = [c0, 0];
      else if (c1 < c0 && c1 < c2) [c, t] = [c1, 1];
      else [c, t] = [c2, 2];
      cost[i]![j] = matrix[i - 1]![j - 1]! + c;
      trace[i]![j] = t;
    }
  }
  for (let j = 0; j <= m; j++) trace[0]![j] = 2;
  for (let i = 0; i <= n; i++) trace[i]![0] = 1;
  let i = n;
  let j = m;
  const text: number[] = [];
  const time: number[] = [];
  while (i > 0 || j > 0) {
    text.push(i - 1);
    time.push(j - 1);
    const t = trace[i]![j];
    if (t === 0) {
      i--;
      j--;
    } else if (t === 1) i--;
    else if (t === 2) j--;
    else throw new Error(`dynamic time warping: no way back from [${i}, ${j}]`);
  }
  return [text.reverse(), time.reverse()];
}
