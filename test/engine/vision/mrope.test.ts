// Qwen2-VL's multimodal rotary positions against transformers.js's own get_rope_index, called
// on the same token ids and image grids: every position of the three streams, and the delta a
// generated token's index is shifted by.
import { Qwen2VLForConditionalGeneration, Tensor } from '@huggingface/transformers';
import { describe, expect, it } from 'vitest';
import { multimodalRopePositions, ropeAt } from '../../../src/engine/vision/mrope.js';

const IDS = { imageTokenId: 9, visionStartTokenId: 7 };
const VISION_END = 8;

/** transformers.js's positions ([3][n]) and delta for one unpadded sequence. */
function reference(ids: number[], grids: [number, number, number][]): { positions: number[][]; delta: number } {
  const self = { config: { image_token_id: IDS.imageTokenId, video_token_id: 99, vision_start_token_id: IDS.visionStartTokenId, vision_config: { spatial_merge_size: 2 } } };
  const proto = Qwen2VLForConditionalGeneration.prototype as unknown as Record<string, (...a: unknown[]) => [Tensor, Tensor]>;
  const bound = Object.assign(Object.create(proto), self) as typeof proto;
  const input = new Tensor('int64', BigInt64Array.from(ids, BigInt), [1, ids.length]);
  const grid = grids.length ? new Tensor('int64', BigInt64Array.from(grids.flat(), BigInt), [grids.length, 3]) : null;
  const [pos, deltas] = bound.get_rope_index!(input, grid, null, new Tensor('int64', new BigInt64Array(ids.length).fill(1n), [1, ids.length]));
  const flat = Array.from(pos.data as ArrayLike<number | bigint>, Number);
  return { positions: [0, 1, 2].map((k) => flat.slice(k * ids.length, (k + 1) * ids.length)), delta: Number((deltas.data as ArrayLike<number | bigint>)[0]) };
}

/** Text tokens 1…, then each image as <|vision_start|>, its pads, <|vision_end|>, then more text. */
function prompt(grids: [number, number, number][], textBefore = [3], textAfter = [4, 5]): number[] {
  const ids = [...textBefore];
  for (const [t, h, w] of grids) ids.push(IDS.visionStartTokenId, ...new Array<number>((t * h * w) / 4).fill(IDS.imageTokenId), VISION_END, 6);
  return [...ids, ...textAfter];
}

describe("Qwen2-VL's multimodal rotary positions", () => {
  it.each([
    ['one image, 4×6 patches', [[1, 4, 6]]],
    ['two images of different grids', [[1, 8, 4], [1, 2, 10]]],
    ['a tall image', [[1, 12, 2]]],
  ] as [string, [number, number, number][]][])("equal transformers.js's get_rope_index: %s", (_, grids) => {
    const ids = prompt(grids, [1, 2, 3], [4, 5, 6, 11]);
    const ours = multimodalRopePositions(ids, grids, { ...IDS, mergeSize: 2 });
    const theirs = reference(ids, grids);
    for (const k of [0, 1, 2]) expect(Array.from({ length: ids.length }, (_, i) => ropeAt(ours, i, k)), `stream ${k}`).toEqual(theirs.positions[k]);
    expect(ours.delta).toBe(theirs.delta);
    // A generated token: its index plus the delta, in all three streams.
    expect([0, 1, 2].map((k) => ropeAt(ours, ids.length + 3, k))).toEqual(new Array(3).fill(ids.length + 3 + theirs.delta));
  });

  it('gives a text-only prompt its indices, and refuses a prompt whose image count does not match its grids', () => {
    const text = multimodalRopePositions([1, 2, 3], [], { ...IDS, mergeSize: 2 });
    expect([0, 1, 2, 5].map((i) => ropeAt(text, i, 1))).toEqual([0, 1, 2, 5]);
    expect(() => multimodalRopePositions(prompt([[1, 4, 4]]), [], { ...IDS, mergeSize: 2 })).toThrow(/opens 1 images for 0 image grids/);
  });
});
