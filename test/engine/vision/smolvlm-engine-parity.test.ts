// Hearth's engine on the SmolVLM fixture against transformers.js's own processor and Idefics3
// model on the same folder and pixels: the same prompt tokens and the same greedy reply, for an
// image request alone and batched with text requests; the image matters; the prefix cache keys
// an image by its pixels.
import { AutoModelForVision2Seq, AutoProcessor, RawImage, Tensor, type PreTrainedModel, type Processor } from '@huggingface/transformers';
import sharp, { type Sharp } from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeBackend } from '../../../src/backends/node.js';
import { createEngine } from '../../../src/engine/engine.js';
import type { ChatMessage, EngineApi, GenerateResult } from '../../../src/engine/protocol.js';
import { modelsSettled } from '../../../src/runtime.js';
import { exportEntry, transformersOnExports } from '../../helpers/exports.js';
import { greedySampling, imageMessage } from '../../helpers/vision.js';

const NAME = 'smolvlm-export';
const MODEL = `svc/${NAME}`;
const NEW_TOKENS = 8;
const greedy = greedySampling(NEW_TOKENS);

interface Picture {
  width: number;
  height: number;
  rgb: Uint8Array;
}

function picture(width: number, height: number, pixel: (x: number, y: number) => [number, number, number]): Picture {
  const rgb = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) rgb.set(pixel(x, y), (y * width + x) * 3);
  return { width, height, rgb };
}

/** 80×120: diagonal red and blue stripes (split 4×3 plus the global tile). */
const stripes = picture(80, 120, (x, y) => (Math.floor((x + y) / 10) % 2 ? [220, 30, 40] : [20, 60, 230]));
/** 50×30: a green-to-white gradient (landscape, another grid). */
const gradient = picture(50, 30, (x, y) => [x * 5, 200, y * 8]);

const FORMATS = {
  png: (s: Sharp) => s.png(),
  jpeg: (s: Sharp) => s.jpeg(),
  webp: (s: Sharp) => s.webp({ lossless: true }),
  gif: (s: Sharp) => s.gif(),
};
const encode = (p: Picture, as: keyof typeof FORMATS) => FORMATS[as](sharp(p.rgb, { raw: { width: p.width, height: p.height, channels: 3 } })).toBuffer().then((b) => new Uint8Array(b));

const withImage = imageMessage;

let engine: EngineApi;
let processor: Processor;
let reference: PreTrainedModel;

beforeAll(async () => {
  const dir = await transformersOnExports();
  engine = createEngine(nodeBackend('cpu', { threads: 1 }));
  await engine.load([exportEntry(dir, NAME, 'fp32')]);
  await modelsSettled(engine);
  processor = await AutoProcessor.from_pretrained(NAME, { local_files_only: true });
  reference = await AutoModelForVision2Seq.from_pretrained(NAME, { dtype: 'fp32', device: 'cpu', local_files_only: true });
}, 600_000);

afterAll(async () => {
  await engine?.dispose();
  await reference?.dispose();
});

/** transformers.js's prompt ids and greedy new tokens for an image (decoded from `bytes` by RawImage, as a user's app would) and a question. */
async function referenceReply(bytes: Uint8Array | null, text: string, options: { do_image_splitting?: boolean } = {}): Promise<{ prompt: number[]; reply: number[] }> {
  const content = [...(bytes ? [{ type: 'image' }] : []), { type: 'text', text }];
  const prompt = processor.apply_chat_template([{ role: 'user', content }] as never, { add_generation_prompt: true }) as unknown as string;
  let inputs: Record<string, Tensor>;
  if (bytes) inputs = (await processor(prompt, [await RawImage.fromBlob(new Blob([bytes as BlobPart]))], options)) as Record<string, Tensor>;
  else inputs = (processor as unknown as { tokenizer: (t: string) => Record<string, Tensor> }).tokenizer(prompt);
  const ids = Array.from(inputs.input_ids!.data as BigInt64Array, Number);
  const out = (await reference.generate({ ...inputs, max_new_tokens: NEW_TOKENS, do_sample: false } as never)) as Tensor;
  return { prompt: ids, reply: Array.from(out.data as BigInt64Array, Number).slice(ids.length) };
}

let n = 0;
const generate = (messages: ChatMessage[]): Promise<GenerateResult> => engine.generate({ id: `vlm-${n++}`, model: MODEL, prompt: { messages }, sampling: greedy }, () => {});

describe('a SmolVLM chat with an image, on the engine', () => {
  it('lists the model as taking text and images', async () => {
    const state = (await engine.models()).find((m) => m.id === MODEL)!;
    expect(state.status).toBe('ready');
    expect(state.input_modalities).toEqual(['text', 'image']);
  });

  it("gives transformers.js's prompt token count and greedy reply for each image alone", async () => {
    for (const p of [stripes, gradient]) {
      const png = await encode(p, 'png');
      const ours = await generate(withImage(png, 'What is in this image?'));
      const theirs = await referenceReply(png, 'What is in this image?');
      expect(ours.prompt_tokens).toBe(theirs.prompt.length);
      expect(ours.token_ids).toEqual(theirs.reply);
    }
  }, 300_000);

  it('gives the same replies when an image request is batched with text requests', async () => {
    const png = await encode(stripes, 'png');
    const texts = ['Tell me a story.', 'Name three colours.'];
    const [image, ...plain] = await Promise.all([generate(withImage(png, 'Describe it.')), ...texts.map((t) => generate([{ role: 'user', content: t }]))]);
    expect(image!.token_ids).toEqual((await referenceReply(png, 'Describe it.')).reply);
    for (const [i, t] of texts.entries()) {
      const theirs = await referenceReply(null, t);
      expect(plain[i]!.prompt_tokens).toBe(theirs.prompt.length);
      expect(plain[i]!.token_ids).toEqual(theirs.reply);
    }
  }, 300_000);

  it('answers two different images differently, so the image reaches the model', async () => {
    const [a, b] = await Promise.all([stripes, gradient].map(async (p) => generate(withImage(await encode(p, 'png'), 'What is this?'))));
    expect(a!.token_ids).not.toEqual(b!.token_ids);
  }, 300_000);

  it('counts the same prompt tokens for the same picture as PNG and as JPEG', async () => {
    const [png, jpeg] = await Promise.all([encode(stripes, 'png'), encode(stripes, 'jpeg')]);
    const counts = await engine.countTokens!({ model: MODEL, prompts: [{ messages: withImage(png, 'Hi') }, { messages: withImage(jpeg, 'Hi') }] });
    expect(counts[0]).toBe(counts[1]);
    expect(counts[0]).toBe((await referenceReply(png, 'Hi')).prompt.length);
  }, 300_000);

  it("reads WebP (lossless) and GIF of the same pixels as the PNG: transformers.js's count and reply for each", async () => {
    // Two colours: a GIF's palette holds the pixels exactly.
    const png = await encode(stripes, 'png');
    const expected = await referenceReply(png, 'Look.');
    for (const as of ['webp', 'gif'] as const) {
      const bytes = await encode(stripes, as);
      const theirs = await referenceReply(bytes, 'Look.');
      expect(theirs, as).toEqual(expected);
      const ours = await generate(withImage(bytes, 'Look.'));
      expect([ours.prompt_tokens, ours.token_ids], as).toEqual([theirs.prompt.length, theirs.reply]);
    }
  }, 300_000);

  it('with detail "low", sends the whole image as one tile: the count and reply of transformers.js without image splitting', async () => {
    const png = await encode(stripes, 'png');
    const theirs = await referenceReply(png, 'Briefly?', { do_image_splitting: false });
    const ours = await generate(withImage(png, 'Briefly?', 'low'));
    expect([ours.prompt_tokens, ours.token_ids]).toEqual([theirs.prompt.length, theirs.reply]);
    // Fewer tokens than the 4×3 tiles and the global one.
    expect(ours.prompt_tokens).toBeLessThan((await referenceReply(png, 'Briefly?')).prompt.length);
  }, 300_000);

  it("refuses a message whose text holds the model's image token, with or without an image part", async () => {
    const png = await encode(gradient, 'png');
    for (const messages of [withImage(png, 'What is <image> here?'), [{ role: 'user', content: [{ type: 'text' as const, text: 'a <image> b' }] }]]) {
      await expect(generate(messages)).rejects.toMatchObject({ code: 'invalid_value', param: 'messages', message: expect.stringMatching(/image tokens; images are sent as image parts/) });
    }
  });

  it('reuses the cache for the same image and question, and not past the first image token for another image', async () => {
    const question = 'Which colours are these?';
    // A picture no earlier test sent, of the gradient's size (the same image tokens): only its pixels differ.
    const checks = picture(50, 30, (x, y) => ((x >> 3) + (y >> 3)) % 2 ? [250, 250, 250] : [10, 10, 10]);
    const [first, same, other] = [await encode(gradient, 'png'), await encode(gradient, 'png'), await encode(checks, 'png')];
    const before = await generate(withImage(first, question));
    const again = await generate(withImage(same, question));
    const another = await generate(withImage(other, question));
    const firstImageToken = (await referenceReply(first, question)).prompt.indexOf(4134);
    expect(again.cached_tokens).toBeGreaterThan(firstImageToken);
    expect(again.token_ids).toEqual(before.token_ids);
    expect(another.prompt_tokens).toBe(before.prompt_tokens);
    expect(another.cached_tokens).toBeLessThanOrEqual(firstImageToken);
  }, 300_000);
});
