// Hearth's engine on the Qwen2-VL fixture against transformers.js's own Qwen2VLProcessor and
// Qwen2VLForConditionalGeneration on the same folder and pixels: the same prompt tokens and the
// same greedy reply for images of different sizes (dynamic resolution, multimodal rotary
// positions), alone and batched with text requests; the image matters; the prefix cache keys
// an image by its pixels; several images in one message, each processed on its own as
// Python's Qwen2VLImageProcessor does.
import { Qwen2VLForConditionalGeneration, type PreTrainedModel, type Processor } from '@huggingface/transformers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeBackend } from '../../../src/backends/node.js';
import { createEngine } from '../../../src/engine/engine.js';
import type { ChatMessage, EngineApi, GenerateResult } from '../../../src/engine/protocol.js';
import { modelsSettled } from '../../../src/runtime.js';
import { exportEntry, transformersOnExports } from '../../helpers/exports.js';
import { greedySampling, pngOf, imageMessage } from '../../helpers/vision.js';
import { loadQwenVlReference, referenceReply as theirReply } from '../../helpers/qwen-vl-reference.js';

const NAME = 'qwen2vl-export';
const MODEL = `svc/${NAME}`;
const NEW_TOKENS = 8;
const greedy = greedySampling(NEW_TOKENS);

const png = pngOf;

/** 90×60 diagonal stripes, 40×100 a gradient (a tall grid), 150×150 checks (scaled down to max_pixels). */
const PICTURES = {
  stripes: () => png(90, 60, (x, y) => (Math.floor((x + y) / 9) % 2 ? [220, 30, 40] : [20, 60, 230])),
  gradient: () => png(40, 100, (x, y) => [x * 6, 200, y * 2]),
  checks: () => png(150, 150, (x, y) => (((x >> 4) + (y >> 4)) % 2 ? [250, 250, 250] : [10, 10, 10])),
};

const withImage = imageMessage;

let engine: EngineApi;
let processor: Processor;
let perImage: Processor;
let reference: PreTrainedModel;

beforeAll(async () => {
  const dir = await transformersOnExports();
  engine = createEngine(nodeBackend('cpu', { threads: 1 }));
  await engine.load([exportEntry(dir, NAME, 'fp32')]);
  await modelsSettled(engine);
  ({ processor, perImage, model: reference } = await loadQwenVlReference(NAME, Qwen2VLForConditionalGeneration));
}, 600_000);

afterAll(async () => {
  await engine?.dispose();
  await reference?.dispose();
});

/** transformers.js's prompt ids and greedy new tokens for images (or none) and then a question. */
const referenceReply = (bytes: Uint8Array | Uint8Array[] | null, text: string) =>
  theirReply(Array.isArray(bytes) && bytes.length > 1 ? perImage : processor, reference, bytes, text, NEW_TOKENS);

let n = 0;
const generate = (messages: ChatMessage[]): Promise<GenerateResult> => engine.generate({ id: `qvl-${n++}`, model: MODEL, prompt: { messages }, sampling: greedy }, () => {});

describe('a Qwen2-VL chat with an image, on the engine', () => {
  it('lists the model as taking text and images', async () => {
    const state = (await engine.models()).find((m) => m.id === MODEL)!;
    expect(state.status, state.detail).toBe('ready');
    expect(state.input_modalities).toEqual(['text', 'image']);
  });

  it("gives transformers.js's prompt token count and greedy reply for images of three sizes", async () => {
    const counts = new Set<number>();
    for (const make of Object.values(PICTURES)) {
      const bytes = await make();
      const ours = await generate(withImage(bytes, 'What is in this image?'));
      const theirs = await referenceReply(bytes, 'What is in this image?');
      expect(ours.prompt_tokens).toBe(theirs.prompt.length);
      expect(ours.token_ids).toEqual(theirs.reply);
      counts.add(ours.prompt_tokens);
    }
    expect(counts.size).toBe(3); // dynamic resolution: each size its own number of image tokens
  }, 300_000);

  it('gives the same replies when image requests are batched with each other and with text requests', async () => {
    const [stripes, gradient] = await Promise.all([PICTURES.stripes(), PICTURES.gradient()]);
    const texts = ['Tell me a story.', 'Name three colours.'];
    const [a, b, ...plain] = await Promise.all([
      generate(withImage(stripes, 'Describe it.')),
      generate(withImage(gradient, 'Describe it.')),
      ...texts.map((t) => generate([{ role: 'user', content: t }])),
    ]);
    expect(a!.token_ids).toEqual((await referenceReply(stripes, 'Describe it.')).reply);
    expect(b!.token_ids).toEqual((await referenceReply(gradient, 'Describe it.')).reply);
    for (const [i, t] of texts.entries()) {
      const theirs = await referenceReply(null, t);
      expect([plain[i]!.prompt_tokens, plain[i]!.token_ids]).toEqual([theirs.prompt.length, theirs.reply]);
    }
  }, 300_000);

  it('answers two different images of the same size differently, so the image reaches the model', async () => {
    const other = await png(90, 60, (x, y) => [(x * 3) % 256, (y * 5) % 256, 128]);
    const [a, b] = await Promise.all([generate(withImage(await PICTURES.stripes(), 'What is this?')), generate(withImage(other, 'What is this?'))]);
    expect(a!.prompt_tokens).toBe(b!.prompt_tokens);
    expect(a!.token_ids).not.toEqual(b!.token_ids);
  }, 300_000);

  it("gives transformers.js's count and reply for two images of different sizes in one message, and another for them swapped", async () => {
    const [stripes, gradient] = await Promise.all([PICTURES.stripes(), PICTURES.gradient()]);
    const both = (first: Uint8Array, second: Uint8Array): ChatMessage[] => [
      {
        role: 'user',
        content: [
          { type: 'image', image: { bytes: first, param: 'messages[0].content[0]' } },
          { type: 'image', image: { bytes: second, param: 'messages[0].content[1]' } },
          { type: 'text', text: 'Compare them.' },
        ],
      },
    ];
    const [ours, swapped] = await Promise.all([generate(both(stripes, gradient)), generate(both(gradient, stripes))]);
    const theirs = await referenceReply([stripes, gradient], 'Compare them.');
    expect([ours!.prompt_tokens, ours!.token_ids]).toEqual([theirs.prompt.length, theirs.reply]);
    expect(swapped!.token_ids).toEqual((await referenceReply([gradient, stripes], 'Compare them.')).reply);
    expect(swapped!.token_ids).not.toEqual(ours!.token_ids);
  }, 300_000);

  it('reuses the cache for the same image and question, with the same reply', async () => {
    const bytes = await PICTURES.gradient();
    const first = await generate(withImage(bytes, 'Which colours?'));
    const again = await generate(withImage(bytes, 'Which colours?'));
    expect(again.cached_tokens).toBeGreaterThan(first.prompt_tokens / 2);
    expect(again.token_ids).toEqual(first.token_ids);
  }, 300_000);
});
