// Feeds for one prefill run of a decoder export, straight to onnxruntime (no engine): rows
// of different lengths padded on the right (the layout both plain and GroupQueryAttention
// graphs take for first prompts), an empty past of the graph's own KV type, and whatever
// else the session declares (position_ids, num_logits_to_keep, hearth_logits_position).
import type { InferenceSession, Tensor } from '../../src/backends/types.js';
import { halfToFloat } from '../../src/engine/models/interface.js';
import { LOGITS_POSITION_INPUT } from '../../src/engine/models/logits-pick.js';

type TensorClass = typeof Tensor;
interface Meta {
  name: string;
  isTensor?: boolean;
  type?: string;
  shape?: readonly (number | string)[];
}

/** Token ids that stay inside every fixture's vocabulary. */
export const promptRows = (lengths: number[]): number[][] =>
  lengths.map((n, r) => Array.from({ length: n }, (_, i) => 100 + ((r * 7919 + i * 104729) % 20000)));

/**
 * The feeds of `rows` for `session`: input_ids and attention_mask [batch, longest] padded on
 * the right, position_ids 0… per row, `past_key_values.*` empty, num_logits_to_keep 0 (every
 * position), and `positions` (each row's, as many for every row) as hearth_logits_position where the graph has it.
 */
export function rightPaddedFeeds(T: TensorClass, session: InferenceSession, rows: number[][], positions?: number[][]): Record<string, Tensor> {
  const B = rows.length;
  const S = Math.max(...rows.map((r) => r.length));
  const ids = new BigInt64Array(B * S);
  const mask = new BigInt64Array(B * S);
  const pos = new BigInt64Array(B * S);
  rows.forEach((row, b) => {
    for (let s = 0; s < S; s++) {
      ids[b * S + s] = BigInt(row[s] ?? 0);
      mask[b * S + s] = s < row.length ? 1n : 0n;
      pos[b * S + s] = BigInt(s);
    }
  });
  const feeds: Record<string, Tensor> = {};
  for (const m of session.inputMetadata as readonly Meta[]) {
    const name = m.name;
    if (name === 'input_ids') feeds[name] = new T('int64', ids, [B, S]);
    else if (name === 'attention_mask') feeds[name] = new T('int64', mask, [B, S]);
    else if (name === 'position_ids') feeds[name] = new T('int64', pos, [B, S]);
    else if (name === 'num_logits_to_keep') feeds[name] = new T('int64', new BigInt64Array([0n]), []);
    else if (name === LOGITS_POSITION_INPUT) {
      const picks = positions ?? rows.map((r) => [r.length - 1]);
      feeds[name] = new T('int64', BigInt64Array.from(picks.flat(), BigInt), [B, picks[0].length]);
    }
    else if (name.startsWith('past_key_values.')) {
      const dims = (m.shape ?? []).map((d, i) => (i === 0 ? B : typeof d === 'number' ? d : 0));
      feeds[name] = m.type === 'float16' ? new T('float16', new Uint16Array(0), dims) : new T('float32', new Float32Array(0), dims);
    } else throw new Error(`no feed for the graph input ${name}`);
  }
  return feeds;
}

/** A float32 or float16 tensor's values as float32. */
export function floats(t: Tensor): Float32Array {
  if (t.data instanceof Uint16Array) return Float32Array.from(t.data, halfToFloat);
  return Float32Array.from(t.data as ArrayLike<number>);
}

/** Logits [batch, seq, vocab] as a function of (row, position). */
export function logitsRows(t: Tensor): (b: number, s: number) => Float32Array {
  const [, S, V] = t.dims as [number, number, number];
  const all = floats(t);
  return (b, s) => all.subarray((b * S + s) * V, (b * S + s + 1) * V);
}

export function largestDifference(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) throw new Error(`lengths differ: ${a.length} and ${b.length}`);
  let most = 0;
  for (let i = 0; i < a.length; i++) most = Math.max(most, Math.abs(a[i]! - b[i]!));
  return most;
}
