// Multimodal rotary positions (Qwen2-VL's M-RoPE): each prompt token has a temporal, a height and
// a width position. Text counts up in all three alike; an image's tokens sit on its merged patch
// grid from where the text before it ended; the text after it resumes past the grid's largest
// position. A generated token at index i takes i + delta in all three. This is transformers.js's
// get_rope_index for one unpadded sequence of images.

/** One prompt's positions: `table` holds the three streams one after another, `length` each. */
export interface RopePositions {
  table: Int32Array;
  length: number;
  /** Added to a generated token's index: its position in every stream. */
  delta: number;
}

/** Stream k's position of token index i (0 temporal, 1 height, 2 width); plain i + 0 without a table. */
export function ropeAt(rope: RopePositions | undefined, i: number, k: number): number {
  if (!rope) return i;
  return i < rope.length ? rope.table[k * rope.length + i]! : i + rope.delta;
}

export interface RopeTokens {
  imageTokenId: number;
  visionStartTokenId: number;
  /** The vision encoder's spatial merge: grid_h / merge × grid_w / merge tokens a frame. */
  mergeSize: number;
}

/** The positions of a prompt whose images have grids `grids` ([t, h, w] in patches), in order. */
export function multimodalRopePositions(ids: readonly number[], grids: readonly (readonly [number, number, number])[], t: RopeTokens): RopePositions {
  const n = ids.length;
  const table = new Int32Array(3 * n);
  const put = (i: number, tp: number, hp: number, wp: number) => {
    table[i] = tp;
    table[n + i] = hp;
    table[2 * n + i] = wp;
  };
  const images = ids.filter((id, i) => id === t.visionStartTokenId && ids[i + 1] === t.imageTokenId).length;
  if (images !== grids.length) throw new Error(`the prompt opens ${images} images for ${grids.length} image grids`);
  let st = 0;
  let next = 0; // the position after the largest so far
  for (const [gt, gh0, gw0] of grids) {
    const ed = ids.findIndex((id, i) => i > st && id === t.imageTokenId);
    const gh = Math.floor(gh0 / t.mergeSize);
    const gw = Math.floor(gw0 / t.mergeSize);
    for (let i = st; i < ed; i++) put(i, next + i - st, next + i - st, next + i - st);
    const offset = next + ed - st;
    const size = gt * gh * gw;
    if (ed + size > n) throw new Error('an image has fewer image tokens than its grid');
    let top = offset;
    for (let k = 0; k < size; k++) {
      const [tp, hp, wp] = [offset + Math.floor(k / (gh * gw)), offset + (Math.floor(k / gw) % gh), offset + (k % gw)];
      put(ed + k, tp, hp, wp);
      top = Math.max(top, tp, hp, wp);
    }
    next = top + 1;
    st = ed + size;
  }
  for (let i = st; i < n; i++) put(i, next + i - st, next + i - st, next + i - st);
  const last = n > st ? next + n - 1 - st : next - 1;
  return { table, length: n, delta: last + 1 - n };
}
