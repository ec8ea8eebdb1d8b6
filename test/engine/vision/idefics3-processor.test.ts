// Hearth's Idefics3 / SmolVLM image processor (src/engine/vision) against transformers.js's
// Idefics3Processor on the SmolVLM fixture folder: the same images, made in code, must give the
// same tiles, the same prompt tokens and the same pixels (sharp's resize reproduced bit for bit,
// onnxruntime's float32 bilinear operation for operation).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AutoProcessor, Idefics3ImageProcessor, RawImage, type Processor, type Tensor } from '@huggingface/transformers';
import { beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES_DIR } from '../../../models/index.js';
import { IMAGE_SEQ_LEN } from '../../../models/exports/smolvlm.js';
import { batchImages, expandImageTokens, idefics3Settings, imagePrompt, processImage, type Idefics3Settings, type Pixels, type ProcessedImage } from '../../../src/engine/vision/idefics3-processor.js';
import { resizeLanczos3 } from '../../../src/engine/vision/resize.js';
import { transformersOnExports } from '../../helpers/exports.js';

const NAME = 'smolvlm-export';

/**
 * Normalised units (image_std 0.5), where one 8-bit level is 2/255 ≈ 0.0078. On x86-64 the
 * pixels come out bit-identical (max and mean 0); the margin allows an onnxruntime build that
 * fuses its bilinear multiply-adds (aarch64 compilers contract by default), an ulp or two.
 */
const TOLERANCE = { max: 1e-6, mean: 1e-7 };

function make(width: number, height: number, channels: 3 | 4, pixel: (x: number, y: number) => number[]): Pixels {
  const data = new Uint8ClampedArray(width * height * channels);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) data.set(pixel(x, y), (y * width + x) * channels);
  return { width, height, channels, data };
}

/** A seeded LCG, so the noise image is the same every run. */
function lcg(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

const noise = lcg(7);
const smooth = lcg(11);
const IMAGES: Record<string, Pixels> = {
  /** Portrait, upscaled to 170×256, 4 × 3 tiles. */
  'stripes 80×120': make(80, 120, 3, (x, y) => (Math.floor((x + y) / 10) % 2 ? [220, 30, 40] : [20, 60, 230])),
  /** Square, upscaled ×4, 4 × 4 tiles. */
  'gradient 64×64': make(64, 64, 3, (x, y) => [x * 4, 200, y * 3]),
  /** Landscape photo-like noise (smooth waves plus grain), 256×115, 2 × 4 tiles. */
  'noise 200×90': (() => {
    const phase = [smooth() * 6, smooth() * 6, smooth() * 6];
    return make(200, 90, 3, (x, y) => phase.map((p, c) => 128 + 70 * Math.sin(x / (9 + c * 4) + p) * Math.cos(y / 13 + p) + (noise() - 0.5) * 90));
  })(),
  /** RGBA with varying alpha (dropped, not composited), 256×107. */
  'alpha 120×50': make(120, 50, 4, (x, y) => [x * 2, y * 5, 255 - x, (x * 7 + y * 3) % 256]),
  /** Larger than size.longest_edge: the Lanczos reduce path (300×150 → 256×128). */
  'downscale 300×150': make(300, 150, 3, (x, y) => [(x * y) % 256, (x * 3) % 256, noise() * 255]),
};

const raw = (p: Pixels) => new RawImage(new Uint8ClampedArray(p.data), p.width, p.height, p.channels);

let processor: Processor;
let settings: Idefics3Settings;

beforeAll(async () => {
  await transformersOnExports();
  processor = await AutoProcessor.from_pretrained(NAME, { local_files_only: true });
  const config = (file: string) => JSON.parse(readFileSync(join(FIXTURES_DIR, NAME, file), 'utf8')) as Record<string, unknown>;
  settings = idefics3Settings(config('preprocessor_config.json'), config('processor_config.json'));
}, 600_000);

interface Reference {
  pixel_values: Tensor;
  pixel_attention_mask: Tensor;
  rows: number[][];
  cols: number[][];
}

/** transformers.js's image processor on samples of images. */
const reference = async (samples: Pixels[][], options: Record<string, unknown> = {}) =>
  (await processor.image_processor!(samples.map((s) => s.map(raw)) as never, { return_row_col_info: true, ...options } as never)) as unknown as Reference;

function difference(a: Float32Array, b: Float32Array): { max: number; mean: number } {
  let max = 0;
  let sum = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i]! - b[i]!);
    if (d > max) max = d;
    sum += d;
  }
  return { max, mean: sum / a.length };
}

const chat = (images: number) => [{ role: 'user', content: [...Array.from({ length: images }, () => ({ type: 'image' })), { type: 'text', text: 'What is in this image?' }] }];
const render = (images: number) => processor.apply_chat_template(chat(images) as never, { add_generation_prompt: true }) as unknown as string;
const ids = (x: { input_ids: Tensor }) => Array.from(x.input_ids.data as BigInt64Array, Number);

describe("Hearth's Idefics3 image processor against transformers.js's", () => {
  it('reads the fixture configs, with transformers.js defaults for the keys a config leaves out', () => {
    expect(settings).toMatchObject({ doConvertRgb: true, doResize: true, longestEdge: 256, maxImageSize: 64, doImageSplitting: true, doRescale: true, doNormalize: true, imageMean: [0.5, 0.5, 0.5], imageStd: [0.5, 0.5, 0.5], resample: 1, imageSeqLen: IMAGE_SEQ_LEN });
    expect(settings.rescaleFactor).toBeCloseTo(1 / 255, 12);
    const bare = idefics3Settings({ max_image_size: { longest_edge: 364 } }, { image_seq_len: 169 });
    expect(bare).toMatchObject({ doConvertRgb: true, doResize: false, doImageSplitting: true, doRescale: true, doNormalize: false, resample: 2, maxImageSize: 364, imageSeqLen: 169 });
    expect(() => idefics3Settings({}, { image_seq_len: 169 })).toThrow(/max_image_size/);
    expect(() => idefics3Settings({ max_image_size: { longest_edge: 364 } })).toThrow(/image_seq_len/);
  });

  it.each(Object.keys(IMAGES))('resizes %s to size.longest_edge exactly as sharp does for transformers.js', async (name) => {
    const p = IMAGES[name]!;
    const rgb = raw(p).rgb();
    const factor = Math.min(256 / p.width, 256 / p.height);
    const [w, h] = [Math.floor(Number((p.width * factor).toFixed(2))), Math.floor(Number((p.height * factor).toFixed(2)))];
    const theirs = await rgb.resize(w, h, { resample: 1 });
    const mine = resizeLanczos3({ width: rgb.width, height: rgb.height, channels: 3, data: new Uint8Array(rgb.data) }, w, h);
    expect([mine.width, mine.height]).toEqual([theirs.width, theirs.height]);
    expect(Buffer.from(mine.data).equals(Buffer.from(theirs.data))).toBe(true);
  });

  it.each(Object.keys(IMAGES))('splits %s into the same rows, cols and tiles, with pixel values within tolerance', async (name) => {
    const p = IMAGES[name]!;
    const mine = processImage(p, settings);
    const theirs = await reference([[p]]);
    expect([mine.rows, mine.cols]).toEqual([theirs.rows[0]![0], theirs.cols[0]![0]]);
    expect(mine.dims[0]).toBe(mine.rows * mine.cols + 1);
    expect([1, ...mine.dims]).toEqual(theirs.pixel_values.dims);
    const diff = difference(mine.pixelValues, theirs.pixel_values.data as Float32Array);
    console.log(`${name}: ${mine.rows}×${mine.cols} + global, max |Δ| ${diff.max.toExponential(2)}, mean |Δ| ${diff.mean.toExponential(2)}`);
    expect(diff.max).toBeLessThan(TOLERANCE.max);
    expect(diff.mean).toBeLessThan(TOLERANCE.mean);
  });

  it('agrees on awkward sizes: a single pixel, slivers, a mask-table boundary (64×65) and a strip shrunk by a box pass first', async () => {
    const grain = lcg(3);
    for (const [w, h] of [[1, 1], [700, 3], [3, 700], [257, 256], [5000, 40], [64, 65]] as const) {
      const p = make(w, h, 3, () => [grain() * 255, grain() * 255, grain() * 255]);
      const mine = processImage(p, settings);
      const theirs = await reference([[p]]);
      expect([w, h, mine.rows, mine.cols, ...mine.dims]).toEqual([w, h, theirs.rows[0]![0], theirs.cols[0]![0], ...theirs.pixel_values.dims.slice(1)]);
      expect(difference(mine.pixelValues, theirs.pixel_values.data as Float32Array).max).toBeLessThan(TOLERANCE.max);
    }
  });

  it("follows another checkpoint's sizes: SmolVLM-256M's 2048 / 512 settings, as transformers.js's processor on the same config", async () => {
    const config = { do_convert_rgb: true, do_image_splitting: true, do_normalize: true, do_pad: true, do_rescale: true, do_resize: true, image_mean: [0.5, 0.5, 0.5], image_std: [0.5, 0.5, 0.5], max_image_size: { longest_edge: 512 }, resample: 1, rescale_factor: 1 / 255, size: { longest_edge: 2048 } };
    const real = idefics3Settings(config, { image_seq_len: 64 });
    const grain = lcg(5);
    const p = make(700, 460, 3, (x, y) => [(x + y) % 256, 128 + 100 * Math.sin(x / 17), grain() * 255]);
    const mine = processImage(p, real);
    const theirs = (await new Idefics3ImageProcessor(config as never)([[raw(p)]] as never, { return_row_col_info: true } as never)) as unknown as Reference;
    // 700×460 → 2048×1345 → 2048×1536: 3 rows × 4 columns of 512² tiles, then the global one.
    expect([mine.rows, mine.cols, ...mine.dims]).toEqual([3, 4, 13, 3, 512, 512]);
    expect([theirs.rows[0]![0], theirs.cols[0]![0], ...theirs.pixel_values.dims.slice(1)]).toEqual([3, 4, 13, 3, 512, 512]);
    expect(difference(mine.pixelValues, theirs.pixel_values.data as Float32Array).max).toBeLessThan(TOLERANCE.max);
  }, 60_000);

  it('keeps an image whole, one tile and no grid, when splitting is off', async () => {
    for (const p of Object.values(IMAGES)) {
      const mine = processImage(p, settings, { doImageSplitting: false });
      const theirs = await reference([[p]], { do_image_splitting: false });
      expect([mine.rows, mine.cols]).toEqual([0, 0]);
      expect([1, ...mine.dims]).toEqual(theirs.pixel_values.dims);
      expect(difference(mine.pixelValues, theirs.pixel_values.data as Float32Array).max).toBeLessThan(TOLERANCE.max);
    }
  });

  it("expands each <image> into the tile tokens transformers.js's processor inserts, token for token", async () => {
    const [a, b] = [IMAGES['stripes 80×120']!, IMAGES['noise 200×90']!];
    const cases: [Pixels[], Record<string, unknown>][] = [[[a], {}], [[a, b], {}], [[b], { do_image_splitting: false }]];
    for (const [images, options] of cases) {
      const prompt = render(images.length);
      const theirs = (await processor(prompt, images.map(raw), options)) as unknown as { input_ids: Tensor };
      const processed = images.map((p) => processImage(p, settings, { doImageSplitting: options.do_image_splitting as boolean | undefined }));
      const expanded = expandImageTokens(prompt, processed, settings);
      const mine = processor.tokenizer!(expanded) as unknown as { input_ids: Tensor };
      expect(ids(mine)).toEqual(ids(theirs));
    }
  });

  it('writes rows of tiles separated by newlines, then a blank line and the global image', () => {
    const run = '<image>'.repeat(IMAGE_SEQ_LEN);
    expect(imagePrompt(0, 0, settings)).toBe(`<fake_token_around_image><global-img>${run}<fake_token_around_image>`);
    expect(imagePrompt(2, 1, settings)).toBe(`<fake_token_around_image><row_1_col_1>${run}\n<fake_token_around_image><row_2_col_1>${run}\n\n<fake_token_around_image><global-img>${run}<fake_token_around_image>`);
  });

  it('pads a batch of samples with different tile counts with zero tiles, masked out, as transformers.js does', async () => {
    const samples = [[IMAGES['noise 200×90']!], [IMAGES['gradient 64×64']!, IMAGES['alpha 120×50']!], [IMAGES['stripes 80×120']!]];
    const mine = batchImages(samples.map((s) => s.map((p) => processImage(p, settings))) as ProcessedImage[][]);
    const theirs = await reference(samples);
    expect(mine.dims).toEqual(theirs.pixel_values.dims);
    expect([mine.dims[0], mine.dims[2], mine.dims[3], mine.dims[4]]).toEqual([3, 3, 64, 64]);
    expect(theirs.pixel_attention_mask.dims).toEqual([mine.dims[0], mine.dims[1], 64, 64]);
    expect(Array.from(mine.pixelAttentionMask)).toEqual(Array.from(theirs.pixel_attention_mask.data as Uint8Array, Number));
    // The first sample (2 × 4 + 1 tiles) is the shortest: its padding is masked and zero.
    const tile = 64 * 64;
    const realTiles = 9;
    expect(mine.pixelAttentionMask.subarray(0, realTiles * tile).every((v) => v === 1)).toBe(true);
    expect(mine.pixelAttentionMask.subarray(realTiles * tile, mine.dims[1] * tile).every((v) => v === 0)).toBe(true);
    expect(mine.pixelValues.subarray(realTiles * 3 * tile, mine.dims[1] * 3 * tile).every((v) => v === 0)).toBe(true);
    expect(difference(mine.pixelValues, theirs.pixel_values.data as Float32Array).max).toBeLessThan(TOLERANCE.max);
  });

  it('imports nothing from Node, sharp or the DOM, so the same code runs in a page', () => {
    // backends/image.ts: the Pixels type the decoders give, itself importing nothing.
    for (const file of ['engine/vision/idefics3-processor.ts', 'engine/vision/qwen2vl-processor.ts', 'engine/vision/image-planes.ts', 'engine/vision/resize.ts', 'backends/image.ts']) {
      const source = readFileSync(fileURLToPath(new URL(`../../../src/${file}`, import.meta.url)), 'utf8');
      const imports = [...source.matchAll(/from '([^']+)'/g)].map((m) => m[1]);
      expect(imports.every((i) => ['./resize.js', './image-planes.js', '../../backends/image.js'].includes(i!)), file).toBe(true);
      expect(source).not.toMatch(/\b(Buffer|process\.|require\(|OffscreenCanvas|document\.)/);
    }
  });
});
