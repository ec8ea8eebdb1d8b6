import type { Backend } from '../../backends/types.js';
import type { ImageDecoder, ImageTooLarge, Pixels } from '../../backends/image.js';
import { EngineError } from '../errors.js';
import { joinPath, readJson } from '../models/files.js';
import { VisionEncoder } from '../models/vision-encoder.js';
import type { CatalogEntry, ChatMessage, PromptInput } from '../protocol.js';
import { chatImages } from '../text/content.js';
import type { TextCodec } from '../text/codec.js';
import { renderChat } from '../tokens.js';
import { batchImages, expandImageTokens, idefics3Settings, processImage, type Idefics3Settings } from './idefics3-processor.js';
import { imageCacheKey, pixelHash, PromptImages } from './prompt-images.js';

type ChatPrompt = Extract<PromptInput, { messages: ChatMessage[] }>;

export type { ImageDecoder };

/** An image over the limit, across the worker boundary too (by its name). */
const isImageTooLarge = (e: unknown): e is ImageTooLarge => e instanceof Error && e.name === 'ImageTooLarge';

/** The most pixels an image may have (DESIGN.md's --max-image-pixels default). */
export const DEFAULT_MAX_IMAGE_PIXELS = 50_000_000;

/** A chat prompt of a VLM made ready: its tokens, its text, and its images with the prefix cache's key for them. */
export interface VisionPrompt {
  ids: number[];
  text: string;
  images?: PromptImages;
  /** The prompt as the prefix cache keys it (images by their pixels); absent without images. */
  cacheKey?: number[];
}

/**
 * What a vision-language model adds to its text model (an Idefics3 / SmolVLM checkpoint in
 * onnx-community's layout): its processor's settings, its image token, and its vision encoder.
 * It turns a chat with images into the prompt tokens Idefics3Processor writes and the pixels the
 * encoder takes, as transformers.js does.
 */
export class VisionModel {
  private constructor(
    private readonly encoder: VisionEncoder,
    readonly settings: Idefics3Settings,
    readonly imageTokenId: number,
  ) {}

  static async load(backend: Backend, folder: string, entry: CatalogEntry): Promise<VisionModel> {
    const config = await readJson<{ image_token_id?: number }>(backend, joinPath(folder, 'config.json'));
    const pre = await readJson<Record<string, unknown>>(backend, joinPath(folder, 'preprocessor_config.json'));
    if (!pre) throw new Error(`${entry.id}: preprocessor_config.json is missing in ${folder}`);
    if (typeof config?.image_token_id !== 'number') throw new Error(`${entry.id}: config.json has no image_token_id`);
    const processor = (await readJson<Record<string, unknown>>(backend, joinPath(folder, 'processor_config.json'))) ?? {};
    const settings = idefics3Settings(pre, processor);
    return new VisionModel(await VisionEncoder.load(backend, folder, entry), settings, config.image_token_id);
  }

  /**
   * A chat's tokens and images: the template renders each image as `<image>`, the processor
   * expands it to the tiles' image tokens, and the tokenizer encodes the whole (special tokens
   * added, as the processor calls it). Images the decoder cannot read, or over `maxPixels`, are
   * the request's fault, named by their part.
   */
  async encodeChat(codec: TextCodec, p: ChatPrompt, decode: ImageDecoder, maxPixels = DEFAULT_MAX_IMAGE_PIXELS): Promise<VisionPrompt> {
    const text = renderChat(codec, p);
    const inputs = chatImages(p.messages);
    const processed = [];
    const named = [];
    for (const image of inputs) {
      const pixels = await decodeOne(decode, image.bytes, image.param, maxPixels);
      // detail "low": the whole image as one tile, no split (the fewest tokens).
      const split = image.detail !== 'low' && this.settings.doImageSplitting;
      const one = processImage(pixels, this.settings, { doImageSplitting: split });
      processed.push(one);
      named.push({ tokens: one.dims[0] * this.settings.imageSeqLen, hash: pixelHash(pixels.width, pixels.height + (split ? 0 : 1 << 20), pixels.data) });
    }
    let expanded: string;
    try {
      expanded = expandImageTokens(text, processed, this.settings);
    } catch {
      throw new EngineError('invalid_value', "The messages' text holds the model's image token <image>; images are sent as image parts.", 'messages');
    }
    const ids = codec.encodeText(expanded, true);
    const positions = ids.flatMap((id, i) => (id === this.imageTokenId ? [i] : []));
    const expected = named.reduce((n, x) => n + x.tokens, 0);
    if (positions.length !== expected) {
      throw new EngineError('invalid_value', "The messages' text holds the model's image tokens; images are sent as image parts.", 'messages');
    }
    if (!processed.length) return { ids, text: expanded };
    const images = new PromptImages(batchImages([processed]), positions, (batch) => this.encoder.encode(batch));
    return { ids, text: expanded, images, cacheKey: imageCacheKey(ids, positions, named) };
  }

  async dispose(): Promise<void> {
    await this.encoder.dispose();
  }
}

async function decodeOne(decode: ImageDecoder, bytes: Uint8Array, param: string, maxPixels: number): Promise<Pixels> {
  try {
    return await decode(bytes, maxPixels);
  } catch (e) {
    if (isImageTooLarge(e)) {
      throw new EngineError('too_large', `The image at ${param} is ${e.width}×${e.height} = ${e.width * e.height} pixels; the limit is ${maxPixels}.`, param);
    }
    throw new EngineError('invalid_value', `The image at ${param} could not be decoded (PNG, JPEG, WebP or GIF are read): ${e instanceof Error ? e.message : String(e)}`, param);
  }
}
