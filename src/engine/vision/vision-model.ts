import type { Backend } from '../../backends/types.js';
import type { ImageDecoder, ImageTooLarge, Pixels } from '../../backends/image.js';
import { EngineError } from '../errors.js';
import { joinPath, readJson } from '../models/files.js';
import { VisionEncoder } from '../models/vision-encoder.js';
import type { CatalogEntry, ChatMessage, PromptInput } from '../protocol.js';
import { chatImages } from '../text/content.js';
import type { TextCodec } from '../text/codec.js';
import { renderChat } from '../tokens.js';
import { idefics3Settings } from './idefics3-processor.js';
import { idefics3Family, qwen2vlFamily, type ImageFamily } from './image-families.js';
import type { RopePositions } from './mrope.js';
import { imageCacheKey, pixelHash, PromptImages } from './prompt-images.js';
import { qwen2vlSettings } from './qwen2vl-processor.js';

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
  /** Its multimodal rotary positions (Qwen2-VL's); absent where they are the token indices. */
  rope?: RopePositions;
}

interface VisionConfig {
  model_type?: string;
  image_token_id?: number;
  vision_start_token_id?: number;
  vision_config?: { spatial_merge_size?: number };
}

/**
 * What a vision-language model adds to its text model (an Idefics3 / SmolVLM or a Qwen2-VL
 * checkpoint in onnx-community's layout): its processor, its image token, and its vision encoder.
 * It turns a chat with images into the prompt tokens the family's processor writes and the
 * pixels the encoder takes, as transformers.js does.
 */
export class VisionModel {
  private constructor(
    private readonly encoder: VisionEncoder,
    private readonly family: ImageFamily,
    readonly imageTokenId: number,
  ) {}

  static async load(backend: Backend, folder: string, entry: CatalogEntry): Promise<VisionModel> {
    const config = await readJson<VisionConfig>(backend, joinPath(folder, 'config.json'));
    const pre = await readJson<Record<string, unknown>>(backend, joinPath(folder, 'preprocessor_config.json'));
    if (!pre) throw new Error(`${entry.id}: preprocessor_config.json is missing in ${folder}`);
    const imageTokenId = config?.image_token_id;
    if (typeof imageTokenId !== 'number') throw new Error(`${entry.id}: config.json has no image_token_id`);
    const encoder = await VisionEncoder.load(backend, folder, entry);
    if (config?.model_type === 'idefics3') {
      const processor = (await readJson<Record<string, unknown>>(backend, joinPath(folder, 'processor_config.json'))) ?? {};
      return new VisionModel(encoder, idefics3Family(idefics3Settings(pre, processor), encoder), imageTokenId);
    }
    const visionStartTokenId = config?.vision_start_token_id;
    if (typeof visionStartTokenId !== 'number') {
      await encoder.dispose();
      throw new Error(`${entry.id}: config.json has no vision_start_token_id`);
    }
    const settings = qwen2vlSettings({ ...pre, merge_size: pre.merge_size ?? config?.vision_config?.spatial_merge_size });
    return new VisionModel(encoder, qwen2vlFamily(settings, encoder, { imageTokenId, visionStartTokenId }), imageTokenId);
  }

  /**
   * A chat's tokens and images: the template renders each image as its placeholder, the
   * processor expands it to the image's tokens, and the tokenizer encodes the whole (special
   * tokens added, as the processor calls it). Images the decoder cannot read, or over
   * `maxPixels`, are the request's fault, named by their part.
   */
  async encodeChat(codec: TextCodec, p: ChatPrompt, decode: ImageDecoder, maxPixels = DEFAULT_MAX_IMAGE_PIXELS): Promise<VisionPrompt> {
    const text = renderChat(codec, p);
    const processed = [];
    const named = [];
    for (const image of chatImages(p.messages)) {
      const pixels = await decodeOne(decode, image.bytes, image.param, maxPixels);
      const one = this.family.process(pixels, image.detail);
      processed.push(one);
      named.push({ tokens: one.tokens, hash: pixelHash(pixels.width, pixels.height + one.variant * (1 << 20), pixels.data) });
    }
    let expanded: string;
    try {
      expanded = this.family.expand(text, processed);
    } catch {
      throw literalImageTokens();
    }
    const ids = codec.encodeText(expanded, true);
    const positions = ids.flatMap((id, i) => (id === this.imageTokenId ? [i] : []));
    if (positions.length !== named.reduce((n, x) => n + x.tokens, 0)) throw literalImageTokens();
    let rope: RopePositions | undefined;
    try {
      rope = processed.length ? this.family.rope?.(ids, processed) : undefined;
    } catch {
      throw literalImageTokens();
    }
    if (!processed.length) return { ids, text: expanded };
    const images = new PromptImages(positions, this.family.encoder(processed));
    return { ids, text: expanded, images, cacheKey: imageCacheKey(ids, positions, named), ...(rope ? { rope } : {}) };
  }

  async dispose(): Promise<void> {
    await this.encoder.dispose();
  }
}

const literalImageTokens = () => new EngineError('invalid_value', "The messages' text holds the model's image tokens; images are sent as image parts.", 'messages');

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
