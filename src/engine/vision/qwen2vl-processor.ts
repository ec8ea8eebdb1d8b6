// Hearth's image processor for Qwen2-VL / Qwen2.5-VL checkpoints: what transformers.js's
// Qwen2VLImageProcessor and Qwen2VLProcessor do to an image and to the prompt, in plain
// TypeScript so it runs in Node and in a page alike.
//
// The steps, as transformers.js runs them:
//   1. drop alpha (do_convert_rgb), resize to smart_resize's size (multiples of patch × merge
//      size, between min_pixels and max_pixels; sharp's bicubic affine for resample 3, its
//      Lanczos-3 for 1, see resize.ts), rescale, normalise (float32, channels first);
//   2. repeat the frame temporal_patch_size times and cut it into patch_size² patches, ordered so
//      that each merge_size × merge_size group is consecutive: pixel_values [patches,
//      3 · temporal · patch²] and image_grid_thw [1, grid_h, grid_w];
//   3. in the prompt, each <|image_pad|> becomes grid_t · grid_h · grid_w / merge² of them.
import type { Pixels } from '../../backends/image.js';
import { normalisedPlanes, rgbRaster, type PixelScaling } from './image-planes.js';
import { resizeBicubic, resizeLanczos3 } from './resize.js';

export interface Qwen2VLSettings extends PixelScaling {
  doConvertRgb: boolean;
  doResize: boolean;
  minPixels: number;
  maxPixels: number;
  patchSize: number;
  mergeSize: number;
  temporalPatchSize: number;
  /** PIL's resample code: 3 (bicubic) in Qwen's checkpoints, 1 (Lanczos) also read. */
  resample: number;
}

/** One image made ready for the vision encoder. */
export interface Qwen2VLImage {
  /** [patches, 3 · temporal · patch²], merge groups consecutive. */
  pixelValues: Float32Array;
  dims: [number, number];
  /** [grid_t, grid_h, grid_w] in patches. */
  grid: [number, number, number];
  /** Its <|image_pad|> tokens: the merged patches. */
  tokens: number;
}

type Json = Record<string, unknown>;
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

/** The processor's settings from a checkpoint's parsed preprocessor_config.json, with transformers.js's defaults. */
export function qwen2vlSettings(pre: Json): Qwen2VLSettings {
  const size = (pre.size ?? {}) as Json;
  const list = (v: unknown, fallback: number[]) => (Array.isArray(v) && v.length === 3 ? (v as number[]) : fallback);
  const patchSize = num(pre.patch_size) ?? 14;
  const mergeSize = num(pre.merge_size) ?? 2;
  return {
    doConvertRgb: pre.do_convert_rgb !== false,
    doResize: pre.do_resize !== false,
    minPixels: num(pre.min_pixels) ?? num(size.shortest_edge) ?? 56 * 56,
    maxPixels: num(pre.max_pixels) ?? num(size.longest_edge) ?? 14 * 14 * 4 * 1280,
    patchSize,
    mergeSize,
    temporalPatchSize: num(pre.temporal_patch_size) ?? 2,
    resample: num(pre.resample) ?? 3,
    doRescale: pre.do_rescale !== false,
    rescaleFactor: num(pre.rescale_factor) ?? 1 / 255,
    doNormalize: pre.do_normalize !== false,
    imageMean: list(pre.image_mean, [0.48145466, 0.4578275, 0.40821073]),
    imageStd: list(pre.image_std, [0.26862954, 0.26130258, 0.27577711]),
  };
}

/**
 * OpenAI's `detail: "low"` for a dynamic-resolution model: the image at most 512 × 512 pixels
 * (what OpenAI resizes a low-detail image to), so 324 image tokens at Qwen2-VL's 28-pixel merge
 * groups however large the picture; never above the checkpoint's own max_pixels.
 */
export const LOW_DETAIL_PIXELS = 512 * 512;

/** The settings for a `detail: "low"` image: max_pixels capped at LOW_DETAIL_PIXELS (and not under min_pixels). */
export function lowDetailSettings(s: Qwen2VLSettings): Qwen2VLSettings {
  return { ...s, maxPixels: Math.max(s.minPixels, Math.min(s.maxPixels, LOW_DETAIL_PIXELS)) };
}

/** transformers.js's smart_resize: the size nearest the image's in multiples of `factor`, its pixels within [min, max]. */
export function smartResize(height: number, width: number, factor: number, minPixels: number, maxPixels: number): { width: number; height: number } {
  if (height < factor || width < factor) {
    const scale = Math.max(factor / height, factor / width);
    height = Math.round(height * scale);
    width = Math.round(width * scale);
  }
  if (Math.max(height, width) / Math.min(height, width) > 200) {
    throw new Error(`Qwen2-VL processor: an image's sides may differ at most 200-fold; this one's are ${width}×${height}`);
  }
  let h = Math.round(height / factor) * factor;
  let w = Math.round(width / factor) * factor;
  if (h * w > maxPixels) {
    const beta = Math.sqrt((height * width) / maxPixels);
    h = Math.max(factor, Math.floor(height / beta / factor) * factor);
    w = Math.max(factor, Math.floor(width / beta / factor) * factor);
  } else if (h * w < minPixels) {
    const beta = Math.sqrt(minPixels / (height * width));
    h = Math.ceil((height * beta) / factor) * factor;
    w = Math.ceil((width * beta) / factor) * factor;
  }
  return { width: w, height: h };
}

/** One image's patches and grid, as transformers.js's Qwen2VLImageProcessor makes them. */
export function processQwen2VLImage(pixels: Pixels, s: Qwen2VLSettings): Qwen2VLImage {
  let img = rgbRaster(pixels, s.doConvertRgb, 'Qwen2-VL processor');
  if (s.doResize) {
    const size = smartResize(img.height, img.width, s.patchSize * s.mergeSize, s.minPixels, s.maxPixels);
    if (s.resample === 3) img = resizeBicubic(img, size.width, size.height);
    else if (s.resample === 1) img = resizeLanczos3(img, size.width, size.height);
    else throw new Error(`Qwen2-VL processor: resample ${s.resample} is not supported (3, bicubic, as Qwen's checkpoints use; or 1, Lanczos)`);
  }
  const planes = normalisedPlanes(img, s);
  const { patchSize: P, mergeSize: M, temporalPatchSize: T } = s;
  const gh = Math.floor(planes.height / P);
  const gw = Math.floor(planes.width / P);
  if (gh % M || gw % M) throw new Error(`Qwen2-VL processor: a ${planes.width}×${planes.height} image is not whole merge groups of ${M}×${M} patches of ${P}`);
  const row = 3 * T * P * P;
  const out = new Float32Array(gh * gw * row);
  // view(t, T, C, gh/M, M, P, gw/M, M, P).permute(0, 3, 6, 4, 7, 2, 1, 5, 8): patch rows by merge
  // group (bh, bw) then within it (mh, mw); each row channel, then frame, then the patch's pixels.
  let r = 0;
  for (let bh = 0; bh < gh / M; bh++)
    for (let bw = 0; bw < gw / M; bw++)
      for (let mh = 0; mh < M; mh++)
        for (let mw = 0; mw < M; mw++, r++) {
          const top = (bh * M + mh) * P;
          const left = (bw * M + mw) * P;
          let k = r * row;
          for (let c = 0; c < 3; c++) {
            const plane = c * planes.height * planes.width;
            // The one frame, repeated for each temporal slot.
            for (let t = 0; t < T; t++)
              for (let py = 0; py < P; py++) {
                const from = plane + (top + py) * planes.width + left;
                out.set(planes.data.subarray(from, from + P), k);
                k += P;
              }
          }
        }
  return { pixelValues: out, dims: [gh * gw, row], grid: [1, gh, gw], tokens: (gh * gw) / (M * M) };
}

export const QWEN2VL_IMAGE_TOKEN = '<|image_pad|>';

/** The prompt with each <|image_pad|> repeated for its image's merged patches, in order. */
export function expandQwen2VLImageTokens(prompt: string, images: readonly Pick<Qwen2VLImage, 'tokens'>[]): string {
  const parts = prompt.split(QWEN2VL_IMAGE_TOKEN);
  if (parts.length - 1 !== images.length) throw new Error(`the prompt has ${parts.length - 1} image tokens for ${images.length} images`);
  return parts.reduce((text, part, i) => text + QWEN2VL_IMAGE_TOKEN.repeat(images[i - 1]!.tokens) + part);
}
