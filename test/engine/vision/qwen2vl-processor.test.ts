// Hearth's Qwen2-VL image processor against transformers.js's Qwen2VLImageProcessor on the
// same pixels: the same resized grid, patch order and pixel values (to the bit), and the same
// number of <|image_pad|> tokens in the prompt.
import { Qwen2VLImageProcessor, RawImage, type Tensor } from '@huggingface/transformers';
import { describe, expect, it } from 'vitest';
import type { Pixels } from '../../../src/backends/image.js';
import { expandQwen2VLImageTokens, LOW_DETAIL_PIXELS, lowDetailSettings, processQwen2VLImage, qwen2vlSettings, smartResize } from '../../../src/engine/vision/qwen2vl-processor.js';

/** Qwen2-VL-2B-Instruct's preprocessor_config.json, with max_pixels lowered to keep the test quick. */
const CONFIG = {
  do_convert_rgb: true, do_normalize: true, do_rescale: true, do_resize: true,
  image_mean: [0.48145466, 0.4578275, 0.40821073], image_std: [0.26862954, 0.26130258, 0.27577711],
  image_processor_type: 'Qwen2VLImageProcessor', min_pixels: 3136, max_pixels: 200704,
  merge_size: 2, patch_size: 14, processor_class: 'Qwen2VLProcessor', resample: 3,
  rescale_factor: 0.00392156862745098, temporal_patch_size: 2,
};

function picture(width: number, height: number, channels: 3 | 4, seed: number): Pixels {
  let s = seed;
  const data = Uint8Array.from({ length: width * height * channels }, (_, i) => (channels === 4 && i % 4 === 3 ? 128 : (s = (Math.imul(s, 1103515245) + 12345) >>> 0) >>> 24));
  return { width, height, channels, data };
}

const CASES: [string, number, number, 3 | 4][] = [
  ['small, scaled up to min_pixels', 20, 30, 3],
  ['landscape', 100, 50, 3],
  ['portrait with alpha', 37, 91, 4],
  ['large, scaled down to max_pixels', 700, 520, 3],
  ['square on the grid already', 56, 56, 3],
];

describe("Hearth's Qwen2-VL image processor against transformers.js's", () => {
  const theirs = new Qwen2VLImageProcessor(CONFIG as never);
  const settings = qwen2vlSettings(CONFIG);

  it.each(CASES)('%s (%i×%i): the same grid, patch order and float32 pixel values', async (_, width, height, channels) => {
    const p = picture(width, height, channels, width * 31 + height);
    const out = (await theirs(new RawImage(p.data, width, height, channels) as never)) as { pixel_values: Tensor; image_grid_thw: Tensor };
    const mine = processQwen2VLImage(p, settings);
    expect(mine.grid).toEqual(Array.from(out.image_grid_thw.data as BigInt64Array, Number));
    expect(mine.dims).toEqual(out.pixel_values.dims);
    const ref = out.pixel_values.data as Float32Array;
    let diff = 0;
    for (let i = 0; i < ref.length; i++) diff = Math.max(diff, Math.abs(ref[i]! - mine.pixelValues[i]!));
    expect(diff).toBe(0);
  });

  it('gives a low-detail image the grid and pixels of a processor whose max_pixels is 512 × 512', async () => {
    // Qwen2-VL-2B-Instruct's own max_pixels (12,845,056) would give this picture 1,800 tokens; low detail gives at most 324.
    const real = qwen2vlSettings({ ...CONFIG, max_pixels: 12845056 });
    const p = picture(1400, 1000, 3, 5);
    const low = processQwen2VLImage(p, lowDetailSettings(real));
    expect(processQwen2VLImage(p, real).tokens).toBe(1800);
    const capped = new Qwen2VLImageProcessor({ ...CONFIG, max_pixels: LOW_DETAIL_PIXELS } as never);
    const out = (await capped(new RawImage(p.data, 1400, 1000, 3) as never)) as { pixel_values: Tensor; image_grid_thw: Tensor };
    expect(low.grid).toEqual(Array.from(out.image_grid_thw.data as BigInt64Array, Number));
    expect(low.tokens).toBeLessThanOrEqual(324);
    expect(Array.from(low.pixelValues.subarray(0, 4096))).toEqual(Array.from((out.pixel_values.data as Float32Array).subarray(0, 4096)));
    // Never above the checkpoint's own bound, nor below its floor.
    expect(lowDetailSettings(settings).maxPixels).toBe(CONFIG.max_pixels);
    expect(lowDetailSettings({ ...settings, minPixels: 300_000, maxPixels: 400_000 }).maxPixels).toBe(300_000);
  });

  it("sizes as smart_resize does: multiples of 28 within the pixel bounds, the aspect kept", () => {
    expect(smartResize(30, 20, 28, 3136, 200704)).toEqual({ width: 56, height: 84 });
    expect(smartResize(520, 700, 28, 3136, 200704)).toEqual({ width: 504, height: 364 });
    expect(() => smartResize(10, 3000, 28, 3136, 200704)).toThrow(/200-fold/);
  });

  it('repeats each <|image_pad|> for its image, in order', () => {
    const text = 'a<|vision_start|><|image_pad|><|vision_end|>b<|vision_start|><|image_pad|><|vision_end|>';
    expect(expandQwen2VLImageTokens(text, [{ tokens: 2 }, { tokens: 3 }])).toBe(
      'a<|vision_start|><|image_pad|><|image_pad|><|vision_end|>b<|vision_start|><|image_pad|><|image_pad|><|image_pad|><|vision_end|>',
    );
    expect(() => expandQwen2VLImageTokens(text, [{ tokens: 2 }])).toThrow(/2 image tokens for 1 images/);
  });
});
