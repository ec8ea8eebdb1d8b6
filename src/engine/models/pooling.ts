import { joinPath, readJson, type FileReader } from './files.js';

/** How token states become one sentence vector (sentence-transformers' Pooling module). */
export type Pooling = 'mean' | 'cls' | 'last_token';

const MODES: Record<string, Pooling> = { mean_tokens: 'mean', cls_token: 'cls', lasttoken: 'last_token' };

/**
 * The pooling a checkpoint's `1_Pooling/config.json` names (gte-Qwen2 and Qwen3-Embedding ship
 * `pooling_mode_lasttoken`), else `fallback`: mean for encoders, last token for decoders, as
 * their model cards do. A mode Hearth does not compute (max, weighted mean) is an error naming it.
 */
export async function readPooling(fs: FileReader, folder: string, fallback: Pooling): Promise<Pooling> {
  const config = await readJson<Record<string, unknown>>(fs, joinPath(folder, '1_Pooling/config.json'));
  if (!config) return fallback;
  const on = Object.keys(config).filter((k) => k.startsWith('pooling_mode_') && config[k] === true).map((k) => k.slice('pooling_mode_'.length));
  if (on.length !== 1 || !MODES[on[0]!]) {
    throw new Error(`1_Pooling/config.json asks for pooling ${on.join(' + ') || 'none'}; Hearth pools by ${Object.keys(MODES).join(', ')} only`);
  }
  return MODES[on[0]!]!;
}

/**
 * One L2-normalised vector per row of `hidden` ([rows, width, dim], float32), pooled over the
 * row's real tokens, which sit at [from, from + length) (left or right padding alike).
 */
export function poolRows(hidden: Float32Array, width: number, dim: number, rows: { from: number; length: number }[], pooling: Pooling): Float32Array[] {
  return rows.map(({ from, length }, b) => {
    const at = (i: number) => (b * width + i) * dim;
    if (pooling !== 'mean') {
      const i = pooling === 'cls' ? from : from + length - 1;
      return normalize(hidden.slice(at(i), at(i) + dim));
    }
    const v = new Float32Array(dim);
    for (let i = from; i < from + length; i++) for (let d = 0; d < dim; d++) v[d] += hidden[at(i) + d]!;
    return normalize(v);
  });
}

export function normalize(v: Float32Array): Float32Array {
  let norm = 0;
  for (const x of v) norm += x * x;
  norm = Math.sqrt(norm) || 1;
  for (let i = 0; i < v.length; i++) v[i] /= norm;
  return v;
}
