// Pictures made in code and transformers.js's reply to them on the SmolVLM fixture: what every
// front door must answer for the same folder and bytes.
import { AutoModelForImageTextToText, AutoProcessor, RawImage, type Tensor } from '@huggingface/transformers';
import sharp from 'sharp';
import type { ChatMessage, SamplingParams } from '../../src/engine/protocol.js';
import { transformersOnExports } from './exports.js';

export const VLM_FIXTURE = 'smolvlm-export';
/** The Qwen2-VL fixture (dynamic resolution, multimodal rotary positions). */
export const QWEN2VL_FIXTURE = 'qwen2vl-export';

/** width × height of seeded noise as a PNG (64×64: about 12 KB). */
export function noisePng(width: number, height: number, seed: number): Promise<Buffer> {
  const rgb = Buffer.alloc(width * height * 3);
  let s = seed;
  for (let i = 0; i < rgb.length; i++) rgb[i] = (s = (Math.imul(s, 1103515245) + 12345) >>> 0) >>> 24;
  return sharp(rgb, { raw: { width, height, channels: 3 } }).png().toBuffer();
}

export const dataUrl = (bytes: Buffer, type = 'image/png') => `data:${type};base64,${bytes.toString('base64')}`;

/** transformers.js's greedy reply (text, special tokens skipped) and prompt token count for one image and a question. */
export async function referenceImageReply(image: Buffer, question: string, maxNewTokens: number, fixture = VLM_FIXTURE): Promise<{ text: string; promptTokens: number }> {
  await transformersOnExports();
  const processor = await AutoProcessor.from_pretrained(fixture, { local_files_only: true });
  const model = await AutoModelForImageTextToText.from_pretrained(fixture, { dtype: 'fp32', device: 'cpu', local_files_only: true });
  try {
    const chat = [{ role: 'user', content: [{ type: 'image' }, { type: 'text', text: question }] }];
    const prompt = processor.apply_chat_template(chat as never, { add_generation_prompt: true }) as unknown as string;
    const inputs = (await processor(prompt, [await RawImage.fromBlob(new Blob([image as BlobPart]))])) as Record<string, Tensor>;
    const n = inputs.input_ids!.dims.at(-1)!;
    const out = (await model.generate({ ...inputs, max_new_tokens: maxNewTokens, do_sample: false } as never)) as Tensor;
    const ids = Array.from(out.data as BigInt64Array, Number).slice(n);
    const tokenizer = (processor as unknown as { tokenizer: { decode(ids: number[], o: object): string } }).tokenizer;
    return { text: tokenizer.decode(ids, { skip_special_tokens: true }), promptTokens: n };
  } finally {
    await model.dispose();
  }
}

/** Greedy sampling of `maxTokens` new tokens, EOS ignored: the engine's side of a parity check. */
export const greedySampling = (maxTokens: number): SamplingParams => ({
  max_tokens: maxTokens, temperature: 0, top_p: 1, top_k: -1, min_p: 0, presence_penalty: 0, frequency_penalty: 0,
  stop: [], stop_token_ids: [], ignore_eos: true, logprobs: -1,
});

/** A PNG of `width` × `height` whose pixel (x, y) is `pixel(x, y)`. */
export function pngOf(width: number, height: number, pixel: (x: number, y: number) => [number, number, number]): Promise<Uint8Array> {
  const rgb = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) rgb.set(pixel(x, y), (y * width + x) * 3);
  return sharp(rgb, { raw: { width, height, channels: 3 } }).png().toBuffer().then((b) => new Uint8Array(b));
}

/** One user message: the image, then the question. */
export const imageMessage = (bytes: Uint8Array, text: string, detail?: 'low'): ChatMessage[] => [
  { role: 'user', content: [{ type: 'image', image: { bytes, param: 'messages[0].content[0]', ...(detail ? { detail } : {}) } }, { type: 'text', text }] },
];
