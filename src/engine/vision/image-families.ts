// What a VLM family does with a prompt's images, between decoding them and the vision encoder:
// its processor (pixels → encoder inputs, and how many image tokens each image takes), how its
// processor writes those tokens into the prompt, and the rotary positions it gives them.
import type { Pixels } from '../../backends/image.js';
import type { KvArray } from '../models/interface.js';
import type { VisionEncoder } from '../models/vision-encoder.js';
import { batchImages, expandImageTokens, processImage, type Idefics3Settings, type ProcessedImage } from './idefics3-processor.js';
import { multimodalRopePositions, type RopePositions } from './mrope.js';
import { expandQwen2VLImageTokens, lowDetailSettings, processQwen2VLImage, type Qwen2VLImage, type Qwen2VLSettings } from './qwen2vl-processor.js';

/** One image, processed. `variant` tells processings of the same pixels apart (for the prefix cache). */
export interface Processed {
  tokens: number;
  variant: number;
}

export interface ImageFamily<P extends Processed = Processed> {
  process(pixels: Pixels, detail?: 'auto' | 'low' | 'high'): P;
  /** The rendered prompt with each image's placeholder expanded to its tokens. */
  expand(text: string, images: P[]): string;
  /** The vision encoder's run over all of a prompt's images, ready to call when the prompt reaches them. */
  encoder(images: P[]): () => Promise<KvArray>;
  /** Multimodal rotary positions, where the family has them. */
  rope?(ids: number[], images: P[]): RopePositions;
}

/** Idefics3 / SmolVLM: tiles plus a global image, `image_seq_len` tokens each; `detail: "low"` the global image alone. */
export function idefics3Family(settings: Idefics3Settings, encoder: VisionEncoder): ImageFamily<ProcessedImage & Processed> {
  return {
    process(pixels, detail) {
      const split = detail !== 'low' && settings.doImageSplitting;
      const one = processImage(pixels, settings, { doImageSplitting: split });
      return { ...one, tokens: one.dims[0] * settings.imageSeqLen, variant: split ? 0 : 1 };
    },
    expand: (text, images) => expandImageTokens(text, images, settings),
    encoder(images) {
      const batch = batchImages([images]);
      const [b, tiles, , h, w] = batch.dims;
      return () => encoder.encode({ pixelValues: batch.pixelValues, dims: batch.dims, pixelAttentionMask: { data: batch.pixelAttentionMask, dims: [b, tiles, h, w] } });
    },
  };
}

export interface Qwen2VLTokens {
  imageTokenId: number;
  visionStartTokenId: number;
}

/**
 * Qwen2-VL: dynamic resolution, one token per merged patch group, multimodal rotary positions;
 * `detail: "low"` the image at most 512 × 512 pixels (lowDetailSettings).
 */
export function qwen2vlFamily(settings: Qwen2VLSettings, encoder: VisionEncoder, ids: Qwen2VLTokens): ImageFamily<Qwen2VLImage & Processed> {
  return {
    process(pixels, detail) {
      const low = detail === 'low' ? lowDetailSettings(settings) : settings;
      return { ...processQwen2VLImage(pixels, low), variant: low.maxPixels === settings.maxPixels ? 0 : 1 };
    },
    expand: (text, images) => expandQwen2VLImageTokens(text, images),
    encoder(images) {
      const rows = images.reduce((n, x) => n + x.dims[0], 0);
      const width = images[0]!.dims[1];
      const pixelValues = new Float32Array(rows * width);
      let at = 0;
      for (const x of images) {
        pixelValues.set(x.pixelValues, at);
        at += x.pixelValues.length;
      }
      const grids = images.map((x) => x.grid);
      return () => encoder.encode({ pixelValues, dims: [rows, width], grids });
    },
    rope: (prompt, images) => multimodalRopePositions(prompt, images.map((x) => x.grid), { ...ids, mergeSize: settings.mergeSize }),
  };
}
