// Hearth's engine on the Qwen2.5-VL fixture against transformers.js's own Qwen2_5_VLProcessor and
// Qwen2_5_VLForConditionalGeneration on the same folder and pixels: the model takes images; the
// same prompt tokens and greedy reply for images of two sizes (the vision encoder's
// image_grid_thw, the text model from text_config, multimodal rotary positions); an image request
// batched with a text request. (The fuller set of cases is qwen2vl-engine-parity.test.ts's, on the
// Qwen2-VL fixture, which shares this path.)
import { Qwen2_5_VLForConditionalGeneration, type PreTrainedModel, type Processor } from '@huggingface/transformers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeBackend } from '../../../src/backends/node.js';
import { createEngine } from '../../../src/engine/engine.js';
import type { ChatMessage, EngineApi, GenerateResult } from '../../../src/engine/protocol.js';
import { modelsSettled } from '../../../src/runtime.js';
import { exportEntry, transformersOnExports } from '../../helpers/exports.js';
import { greedySampling, pngOf, imageMessage } from '../../helpers/vision.js';
import { loadQwenVlReference, referenceReply } from '../../helpers/qwen-vl-reference.js';

const NAME = 'qwen25vl-export';
const MODEL = `svc/${NAME}`;
const NEW_TOKENS = 8;
const greedy = greedySampling(NEW_TOKENS);

const png = pngOf;

/** 90×60 diagonal stripes (→ 84×56: 6 image tokens), 40×100 a gradient (a tall grid: → 56×112, 8). */
const stripes = () => png(90, 60, (x, y) => (Math.floor((x + y) / 9) % 2 ? [220, 30, 40] : [20, 60, 230]));
const gradient = () => png(40, 100, (x, y) => [x * 6, 200, y * 2]);

const withImage = imageMessage;

let engine: EngineApi;
let processor: Processor;
let reference: PreTrainedModel;

beforeAll(async () => {
  const dir = await transformersOnExports();
  engine = createEngine(nodeBackend('cpu', { threads: 1 }));
  await engine.load([exportEntry(dir, NAME, 'fp32')]);
  await modelsSettled(engine);
  ({ processor, model: reference } = await loadQwenVlReference(NAME, Qwen2_5_VLForConditionalGeneration));
}, 600_000);

afterAll(async () => {
  await engine?.dispose();
  await reference?.dispose();
});

const theirs = (bytes: Uint8Array | null, text: string) => referenceReply(processor, reference, bytes, text, NEW_TOKENS);

let n = 0;
const generate = (messages: ChatMessage[]): Promise<GenerateResult> => engine.generate({ id: `q25-${n++}`, model: MODEL, prompt: { messages }, sampling: greedy }, () => {});

describe('a Qwen2.5-VL chat with an image, on the engine', () => {
  it('lists the model as taking text and images', async () => {
    const state = (await engine.models()).find((m) => m.id === MODEL)!;
    expect(state.status, state.detail).toBe('ready');
    expect(state.input_modalities).toEqual(['text', 'image']);
  });

  it("gives transformers.js's prompt token count and greedy reply for images of two sizes", async () => {
    const counts = new Set<number>();
    for (const make of [stripes, gradient]) {
      const bytes = await make();
      const ours = await generate(withImage(bytes, 'What is in this image?'));
      const ref = await theirs(bytes, 'What is in this image?');
      expect(ours.prompt_tokens).toBe(ref.prompt.length);
      expect(ours.token_ids).toEqual(ref.reply);
      counts.add(ours.prompt_tokens);
    }
    expect(counts.size).toBe(2); // dynamic resolution: each size its own number of image tokens
  }, 300_000);

  it('gives the same replies to an image request batched with a text request', async () => {
    const bytes = await gradient();
    const [image, text] = await Promise.all([generate(withImage(bytes, 'Describe it.')), generate([{ role: 'user', content: 'Tell me a story.' }])]);
    expect(image!.token_ids).toEqual((await theirs(bytes, 'Describe it.')).reply);
    const ref = await theirs(null, 'Tell me a story.');
    expect([text!.prompt_tokens, text!.token_ids]).toEqual([ref.prompt.length, ref.reply]);
  }, 300_000);
});
