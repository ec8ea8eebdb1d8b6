// Hearth's image processor for Idefics3 / SmolVLM checkpoints: what transformers.js's
// Idefics3ImageProcessor and Idefics3Processor do to an image and to the prompt, in plain
// TypeScript (no Node APIs, no sharp, no canvas) so it runs in Node and in a page alike.
//
// The steps, as transformers.js 4.x runs them:
//   1. drop alpha (do_convert_rgb), resize to size.longest_edge keeping the aspect ratio
//      (sharp Lanczos-3 for resample 1, see resize.ts), rescale, normalise (float32, HWC);
//   2. with splitting, resize (bilinear, ONNX Resize half_pixel, on the normalised floats) to
//      multiples of max_image_size.longest_edge, cut rows × cols tiles and append the whole image
//      resized to one tile; without, resize to one tile only;
//   3. pad a batch's samples to the largest tile count with zero tiles, masked false.
import type { Pixels } from '../../backends/image.js';
import { normalisedPlanes, rgbRaster, type Planes } from './image-planes.js';
import { resizeLanczos3 } from './resize.js';

export type { Pixels };

export interface Idefics3Settings {
  doConvertRgb: boolean;
  doResize: boolean;
  /** size.longest_edge: the first resize's longest side. */
  longestEdge: number;
  /** max_image_size.longest_edge: a tile's side. */
  maxImageSize: number;
  doImageSplitting: boolean;
  doRescale: boolean;
  rescaleFactor: number;
  doNormalize: boolean;
  imageMean: number[];
  imageStd: number[];
  /** PIL's resample code (0 nearest, 1 Lanczos, 2 bilinear, 3 bicubic, …). */
  resample: number;
  /** <image> tokens per tile (processor_config.json). */
  imageSeqLen: number;
}

/** One image made ready for the vision encoder. */
export interface ProcessedImage {
  /** [tiles, 3, H, W], tiles row-major then the global image. */
  pixelValues: Float32Array;
  dims: [number, number, number, number];
  /** The split grid; 0 × 0 when the image was not split. */
  rows: number;
  cols: number;
}

type Json = Record<string, unknown>;

const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);
const bool = (v: unknown): boolean | undefined => (typeof v === 'boolean' ? v : undefined);
const edge = (v: unknown): number | undefined => (v && typeof v === 'object' ? num((v as Json).longest_edge) : num(v));

function channelList(v: unknown, name: string): number[] {
  if (v === undefined) return [];
  const list = Array.isArray(v) ? v : [v, v, v];
  if (list.length !== 3 || !list.every((x) => typeof x === 'number')) throw new Error(`Idefics3 processor: ${name} must be a number or three numbers`);
  return list as number[];
}

/**
 * The processor's settings from a checkpoint's parsed preprocessor_config.json and
 * processor_config.json, with transformers.js's defaults where a key is missing.
 */
export function idefics3Settings(preprocessor: Json, processor: Json = {}): Idefics3Settings {
  const longestEdge = edge(preprocessor.size ?? preprocessor.image_size);
  const maxImageSize = edge(preprocessor.max_image_size);
  const imageSeqLen = num(processor.image_seq_len) ?? num(preprocessor.image_seq_len);
  // transformers.js has no defaults for these: it fails on a config without them, as this does.
  if (maxImageSize === undefined) throw new Error('Idefics3 processor: preprocessor_config.json has no max_image_size.longest_edge');
  if (imageSeqLen === undefined) throw new Error('Idefics3 processor: processor_config.json has no image_seq_len');
  const settings: Idefics3Settings = {
    doConvertRgb: bool(preprocessor.do_convert_rgb) ?? true,
    doResize: bool(preprocessor.do_resize) ?? longestEdge !== undefined,
    // Only read when doResize, which needs it.
    longestEdge: longestEdge ?? maxImageSize,
    maxImageSize,
    doImageSplitting: bool(preprocessor.do_image_splitting) ?? true,
    doRescale: bool(preprocessor.do_rescale) ?? true,
    rescaleFactor: num(preprocessor.rescale_factor) ?? 1 / 255,
    doNormalize: bool(preprocessor.do_normalize) ?? false,
    imageMean: channelList(preprocessor.image_mean ?? preprocessor.mean, 'image_mean'),
    imageStd: channelList(preprocessor.image_std ?? preprocessor.std, 'image_std'),
    resample: num(preprocessor.resample) ?? 2,
    imageSeqLen,
  };
  if (settings.doResize && longestEdge === undefined) throw new Error('Idefics3 processor: do_resize without size.longest_edge');
  if (settings.doNormalize && (settings.imageMean.length !== 3 || settings.imageStd.length !== 3)) throw new Error('Idefics3 processor: do_normalize needs image_mean and image_std');
  return settings;
}

/** The first resize's target, as transformers.js's get_resize_output_image_size for { longest_edge }. */
export function firstResizeSize(width: number, height: number, longestEdge: number): { width: number; height: number } {
  const factor = Math.min(longestEdge / width, longestEdge / height);
  // transformers.js rounds to two decimals before flooring, against float noise.
  return { width: Math.floor(Number((width * factor).toFixed(2))), height: Math.floor(Number((height * factor).toFixed(2))) };
}

/** Size for splitting: both sides up to multiples of `tile`, as get_resize_for_vision_encoder. */
export function splitResizeSize(width: number, height: number, tile: number): { width: number; height: number } {
  const aspect = width / height;
  if (width >= height) {
    width = Math.ceil(width / tile) * tile;
    height = Math.ceil(Math.floor(width / aspect) / tile) * tile;
  } else {
    height = Math.ceil(height / tile) * tile;
    width = Math.ceil(Math.floor(height * aspect) / tile) * tile;
  }
  return { width, height };
}

const f = Math.fround;

/**
 * Bilinear resize as onnxruntime's CPU Resize (mode linear, half_pixel, no antialias) computes
 * it in float32, which is what transformers.js's interpolate_4d runs.
 */
function bilinear(src: Planes, height: number, width: number): Planes {
  if (src.height === height && src.width === width) return src;
  const axis = (inLen: number, outLen: number) => {
    const scale = f(f(outLen) / f(inLen));
    const lo = new Int32Array(outLen), hi = new Int32Array(outLen);
    const w1 = new Float32Array(outLen), w2 = new Float32Array(outLen);
    for (let o = 0; o < outLen; o++) {
      let p = outLen === inLen ? o : f(f(f(o + 0.5) / scale) - 0.5);
      p = Math.max(0, Math.min(p, inLen - 1));
      const a = Math.min(Math.trunc(p), inLen - 1);
      const b = Math.min(a + 1, inLen - 1);
      lo[o] = a;
      hi[o] = b;
      // w1 weighs the far sample (distance to the near one), w2 the near one.
      w1[o] = a === b ? 0.5 : f(Math.abs(p - a));
      w2[o] = a === b ? 0.5 : f(Math.abs(p - b));
    }
    return { lo, hi, w1, w2 };
  };
  const ys = axis(src.height, height);
  const xs = axis(src.width, width);
  const out = new Float32Array(src.channels * height * width);
  const plane = src.height * src.width;
  for (let c = 0; c < src.channels; c++) {
    const base = c * plane;
    for (let y = 0; y < height; y++) {
      const r1 = base + ys.lo[y]! * src.width, r2 = base + ys.hi[y]! * src.width;
      const dy1 = ys.w1[y]!, dy2 = ys.w2[y]!;
      for (let x = 0; x < width; x++) {
        const x1 = xs.lo[x]!, x2 = xs.hi[x]!;
        const dx1 = xs.w1[x]!, dx2 = xs.w2[x]!;
        // Summed left to right, as onnxruntime's C++ expression.
        const v = f(f(f(f(f(dx2 * dy2) * src.data[r1 + x1]!) + f(f(dx1 * dy2) * src.data[r1 + x2]!)) + f(f(dx2 * dy1) * src.data[r2 + x1]!)) + f(f(dx1 * dy1) * src.data[r2 + x2]!));
        out[(c * height + y) * width + x] = v;
      }
    }
  }
  return { channels: src.channels, height, width, data: out };
}

function crop(src: Planes, top: number, left: number, height: number, width: number): Float32Array {
  const out = new Float32Array(src.channels * height * width);
  for (let c = 0; c < src.channels; c++)
    for (let y = 0; y < height; y++) {
      const from = (c * src.height + top + y) * src.width + left;
      out.set(src.data.subarray(from, from + width), (c * height + y) * width);
    }
  return out;
}

/** Step 1: RGB, first resize, rescale, normalise; float32 channels first. */
function prepare(pixels: Pixels, s: Idefics3Settings): Planes {
  let img = rgbRaster(pixels, s.doConvertRgb, 'Idefics3 processor');
  if (s.doResize) {
    const size = firstResizeSize(img.width, img.height, s.longestEdge);
    if (size.width !== img.width || size.height !== img.height) {
      // sharp's Lanczos-3 is what transformers.js uses for PIL's LANCZOS (1).
      if (s.resample !== 1) throw new Error(`Idefics3 processor: resample ${s.resample} is not supported (only 1, Lanczos, as Idefics3 and SmolVLM checkpoints use)`);
      img = resizeLanczos3(img, size.width, size.height);
    }
  }
  return normalisedPlanes(img, s);
}

/**
 * One image's tiles for the vision encoder, as transformers.js's Idefics3ImageProcessor makes
 * them: rows × cols tiles then the global image, or the global image alone.
 */
export function processImage(pixels: Pixels, settings: Idefics3Settings, options: { doImageSplitting?: boolean } = {}): ProcessedImage {
  const tile = settings.maxImageSize;
  const image = prepare(pixels, settings);
  const plane = 3 * tile * tile;
  if (!(options.doImageSplitting ?? settings.doImageSplitting)) {
    const global = bilinear(image, tile, tile);
    return { pixelValues: global.data, dims: [1, 3, tile, tile], rows: 0, cols: 0 };
  }
  const size = splitResizeSize(image.width, image.height, tile);
  const resized = bilinear(image, size.height, size.width);
  const { height, width } = resized;
  if (height <= tile && width <= tile) {
    // Nothing to split: the image itself (already one tile's size) and no grid.
    return { pixelValues: resized.data, dims: [1, 3, height, width], rows: 0, cols: 0 };
  }
  const rows = Math.ceil(height / tile);
  const cols = Math.ceil(width / tile);
  const tileH = Math.ceil(height / rows);
  const tileW = Math.ceil(width / cols);
  const out = new Float32Array((rows * cols + 1) * plane);
  let n = 0;
  for (let r = 0; r < rows; r++)
    for (let c = 0; c < cols; c++) {
      const top = r === rows - 1 ? height - tileH : r * tileH;
      const left = c === cols - 1 ? width - tileW : c * tileW;
      out.set(crop(resized, top, left, tileH, tileW), n++ * plane);
    }
  out.set(bilinear(resized, tile, tile).data, n * plane);
  return { pixelValues: out, dims: [rows * cols + 1, 3, tile, tile], rows, cols };
}

/** The tokens Idefics3Processor writes around and between tiles. */
export const IDEFICS3_TOKENS = { image: '<image>', fakeAround: '<fake_token_around_image>', globalImage: '<global-img>' } as const;

/** The text that replaces one `<image>` in the rendered prompt for an image split rows × cols (0 × 0: not split). */
export function imagePrompt(rows: number, cols: number, settings: Pick<Idefics3Settings, 'imageSeqLen'>): string {
  const { image, fakeAround, globalImage } = IDEFICS3_TOKENS;
  const run = image.repeat(settings.imageSeqLen);
  const global = `${fakeAround}${globalImage}${run}${fakeAround}`;
  if (rows === 0 && cols === 0) return global;
  let text = '';
  for (let r = 1; r <= rows; r++) {
    for (let c = 1; c <= cols; c++) text += `${fakeAround}<row_${r}_col_${c}>${run}`;
    text += '\n';
  }
  return `${text}\n${global}`;
}

/** A rendered prompt with its `<image>` tokens expanded for `images`, in order, as Idefics3Processor does. */
export function expandImageTokens(prompt: string, images: readonly Pick<ProcessedImage, 'rows' | 'cols'>[], settings: Pick<Idefics3Settings, 'imageSeqLen'>): string {
  const parts = prompt.split(IDEFICS3_TOKENS.image);
  if (parts.length - 1 !== images.length) throw new Error(`Idefics3 processor: the prompt has ${parts.length - 1} <image> tokens for ${images.length} images`);
  return parts.reduce((text, part, i) => text + imagePrompt(images[i - 1]!.rows, images[i - 1]!.cols, settings) + part);
}

export interface Idefics3Batch {
  /** [batch, maxTiles, 3, H, W], short samples padded with zero tiles. */
  pixelValues: Float32Array;
  /** [batch, maxTiles, H, W], 1 for a real tile's pixels, 0 for padding. */
  pixelAttentionMask: Uint8Array;
  dims: [number, number, number, number, number];
}

/**
 * The vision encoder's inputs for a batch: each sample's images' tiles one after another, then
 * zero tiles up to the longest sample, masked out, as transformers.js pads several samples.
 */
export function batchImages(samples: readonly (readonly ProcessedImage[])[]): Idefics3Batch {
  const first = samples[0]?.[0];
  if (!first) throw new Error('Idefics3 processor: no images');
  const [, channels, height, width] = first.dims;
  const tiles = samples.map((images) => images.reduce((n, image) => n + image.dims[0], 0));
  const maxTiles = Math.max(...tiles);
  const tileSize = channels * height * width;
  const pixelValues = new Float32Array(samples.length * maxTiles * tileSize);
  const pixelAttentionMask = new Uint8Array(samples.length * maxTiles * height * width);
  samples.forEach((images, b) => {
    let offset = b * maxTiles * tileSize;
    for (const image of images) {
      if (image.dims[1] !== channels || image.dims[2] !== height || image.dims[3] !== width) throw new Error('Idefics3 processor: images of different tile sizes in one batch');
      pixelValues.set(image.pixelValues, offset);
      offset += image.pixelValues.length;
    }
    pixelAttentionMask.fill(1, b * maxTiles * height * width, (b * maxTiles + tiles[b]!) * height * width);
  });
  return { pixelValues, pixelAttentionMask, dims: [samples.length, maxTiles, channels, height, width] };
}
