// The SmolVLM fixture (models/exports/smolvlm.ts) on transformers.js, the reference: its own
// processor and Idefics3 model load the folder offline, expand an image into the image tokens
// the configs imply, and generate from a chat with an image part, the reply depending on the image.
import { AutoModelForVision2Seq, AutoProcessor, RawImage, Tensor, type PreTrainedModel, type Processor } from '@huggingface/transformers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IMAGE_SEQ_LEN, SMOLVLM_DIMS, smolvlmTokenIds } from '../../models/exports/smolvlm.js';
import { transformersOnExports } from '../helpers/exports.js';

const NAME = 'smolvlm-export';
const ids = smolvlmTokenIds();

/** An RGB image made in code: `pixel(x, y)` gives each pixel's colour. */
function image(width: number, height: number, pixel: (x: number, y: number) => [number, number, number]): RawImage {
  const data = new Uint8ClampedArray(width * height * 3);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) data.set(pixel(x, y), (y * width + x) * 3);
  return new RawImage(data, width, height, 3);
}

/** 80×120 (portrait, taller than a tile): diagonal stripes of red and blue. */
const stripes = () => image(80, 120, (x, y) => (Math.floor((x + y) / 10) % 2 ? [220, 30, 40] : [20, 60, 230]));
/** 64×64 (a tile's size, though the processor first scales it up to size.longest_edge): a colour gradient. */
const gradient = () => image(64, 64, (x, y) => [x * 4, 200, y * 3]);

const chat = (text: string) => [{ role: 'user', content: [{ type: 'image' }, { type: 'text', text }] }];

let processor: Processor;
let model: PreTrainedModel;

beforeAll(async () => {
  await transformersOnExports();
  processor = await AutoProcessor.from_pretrained(NAME, { local_files_only: true });
  model = await AutoModelForVision2Seq.from_pretrained(NAME, { dtype: 'fp32', device: 'cpu', local_files_only: true });
}, 600_000);

afterAll(async () => {
  await model?.dispose();
});

/** The processor's inputs for `img` in a chat asking `text`. */
async function inputs(img: RawImage, text = 'What is in this image?') {
  const prompt = processor.apply_chat_template(chat(text) as never, { add_generation_prompt: true }) as unknown as string;
  return (await processor(prompt, [img])) as Record<string, Tensor>;
}

/** Greedy new token ids for `img`. */
async function reply(img: RawImage, maxNewTokens = 6): Promise<number[]> {
  const x = await inputs(img);
  const out = (await model.generate({ ...x, max_new_tokens: maxNewTokens, do_sample: false } as never)) as Tensor;
  return Array.from(out.data as BigInt64Array, Number).slice(x.input_ids!.dims.at(-1)!);
}

const count = (list: number[], id: number) => list.filter((t) => t === id).length;

function correlation(a: number[], b: number[]): number {
  const mean = (v: number[]) => v.reduce((s, x) => s + x, 0) / v.length;
  const [ma, mb] = [mean(a), mean(b)];
  let ab = 0, aa = 0, bb = 0;
  a.forEach((x, i) => {
    ab += (x - ma) * (b[i]! - mb);
    aa += (x - ma) ** 2;
    bb += (b[i]! - mb) ** 2;
  });
  return ab / Math.sqrt(aa * bb);
}

describe('the SmolVLM fixture on transformers.js', () => {
  it('loads as Idefics3 with the processor, tokenizer and chat template of a SmolVLM export', () => {
    expect(model.constructor.name).toBe('Idefics3ForConditionalGeneration');
    expect(processor.constructor.name).toBe('Idefics3Processor');
    expect((processor as unknown as { config: { image_seq_len: number } }).config.image_seq_len).toBe(IMAGE_SEQ_LEN);
    const prompt = processor.apply_chat_template(chat('Describe it.') as never, { add_generation_prompt: true });
    expect(prompt).toBe('<|im_start|>User:<image>Describe it.<end_of_utterance>\nAssistant:');
  });

  it('splits a portrait image into a 4×3 grid of tiles and a global image, each tile image_seq_len <image> tokens', async () => {
    const x = await inputs(stripes());
    const list = Array.from(x.input_ids!.data as BigInt64Array, Number);
    // 80×120 → 170×256 (longest edge 256) → 192×256 (multiples of 64) → 4 rows × 3 columns of 64×64 tiles, then the global one.
    const tiles = 4 * 3;
    expect(x.pixel_values!.dims).toEqual([1, tiles + 1, 3, SMOLVLM_DIMS.vision.imageSize, SMOLVLM_DIMS.vision.imageSize]);
    expect(x.pixel_attention_mask!.dims).toEqual([1, tiles + 1, SMOLVLM_DIMS.vision.imageSize, SMOLVLM_DIMS.vision.imageSize]);
    expect(x.pixel_attention_mask!.type).toBe('bool');
    expect(count(list, ids['<image>']!)).toBe(IMAGE_SEQ_LEN * (tiles + 1));
    expect(count(list, ids['<global-img>']!)).toBe(1);
    expect(count(list, ids['<fake_token_around_image>']!)).toBe(tiles + 2);
    for (let r = 1; r <= 4; r++) for (let c = 1; c <= 3; c++) expect(count(list, ids[`<row_${r}_col_${c}>`]!)).toBe(1);
    expect(count(list, ids['<row_1_col_4>']!)).toBe(0);
    expect(count(list, ids['<row_5_col_1>']!)).toBe(0);
    // The template's literal <|im_start|> opens the prompt (no BOS added by the tokenizer); the last tile's block runs on to the global one.
    expect(list[0]).toBe(ids['<|im_start|>']);
    expect(list.filter((t) => t === ids['<end_of_utterance>'])).toHaveLength(1);
    const global = list.indexOf(ids['<global-img>']!);
    expect(list.slice(global - 1, global + IMAGE_SEQ_LEN + 2)).toEqual([ids['<fake_token_around_image>'], ids['<global-img>'], ...Array(IMAGE_SEQ_LEN).fill(ids['<image>']), ids['<fake_token_around_image>']]);
  });

  it("upscales a one-tile 64×64 image to size's longest edge and splits it 4×4, or keeps it one global block when splitting is off", async () => {
    const x = await inputs(gradient());
    const list = Array.from(x.input_ids!.data as BigInt64Array, Number);
    // 64×64 → 256×256 (transformers.js resizes up to size.longest_edge, as Python's processor) → a 4×4 grid, then the global tile.
    const tiles = 4 * 4;
    expect(x.pixel_values!.dims[1]).toBe(tiles + 1);
    expect(count(list, ids['<image>']!)).toBe(IMAGE_SEQ_LEN * (tiles + 1));
    expect(count(list, ids['<row_4_col_4>']!)).toBe(1);
    expect(count(list, ids['<global-img>']!)).toBe(1);
    const prompt = processor.apply_chat_template(chat('What is in this image?') as never, { add_generation_prompt: true });
    const single = (await processor(prompt, [gradient()], { do_image_splitting: false })) as Record<string, Tensor>;
    const singleList = Array.from(single.input_ids!.data as BigInt64Array, Number);
    expect(single.pixel_values!.dims).toEqual([1, 1, 3, 64, 64]);
    expect(count(singleList, ids['<image>']!)).toBe(IMAGE_SEQ_LEN);
    expect(count(singleList, ids['<global-img>']!)).toBe(1);
    expect(singleList.some((t) => t > ids['<global-img>']! && t <= ids['<row_6_col_6>']!)).toBe(false);
  });

  it('encodes each real tile to image_seq_len features of the text hidden size, dropping the zero tiles that pad a batch', async () => {
    const hidden = SMOLVLM_DIMS.text.hidden;
    const one = (await processor.image_processor!([[stripes()]])) as Record<string, Tensor>;
    const alone = (await model.encode_image({ pixel_values: one.pixel_values, pixel_attention_mask: one.pixel_attention_mask })) as Tensor;
    expect(alone.dims).toEqual([13, IMAGE_SEQ_LEN, hidden]);
    // Two samples of 13 and 17 tiles: the processor pads the first with 4 zero tiles (mask false), the encoder drops them.
    const two = (await processor.image_processor!([[stripes()], [gradient()]])) as Record<string, Tensor>;
    expect(two.pixel_values!.dims).toEqual([2, 17, 3, 64, 64]);
    const both = (await model.encode_image({ pixel_values: two.pixel_values, pixel_attention_mask: two.pixel_attention_mask })) as Tensor;
    expect(both.dims).toEqual([13 + 17, IMAGE_SEQ_LEN, hidden]);
    const first = Array.from((both.data as Float32Array).subarray(0, alone.data.length));
    Array.from(alone.data as Float32Array).forEach((v, i) => expect(first[i]).toBeCloseTo(v, 5));
  });

  it('loads q4 files for the vision encoder and decoder, as the SmolVLM examples ask, whose image features track the fp32 ones', async () => {
    const q4 = await AutoModelForVision2Seq.from_pretrained(NAME, { dtype: { embed_tokens: 'fp32', vision_encoder: 'q4', decoder_model_merged: 'q4' }, device: 'cpu', local_files_only: true });
    try {
      const x = await inputs(stripes());
      const exact = Array.from(((await model.encode_image(x)) as Tensor).data as Float32Array);
      const quantized = Array.from(((await q4.encode_image(x)) as Tensor).data as Float32Array);
      expect(quantized).toHaveLength(exact.length);
      expect(quantized).not.toEqual(exact);
      expect(correlation(exact, quantized)).toBeGreaterThan(0.95);
      const out = (await q4.generate({ ...x, max_new_tokens: 4, do_sample: false } as never)) as Tensor;
      expect(out.dims).toEqual([1, x.input_ids!.dims[1]! + 4]);
    } finally {
      await q4.dispose();
    }
  }, 120_000);

  it('generates greedily from a chat with an image part and a text part, the same tokens twice', async () => {
    const first = await reply(stripes());
    const second = await reply(stripes());
    expect(first).toHaveLength(6);
    expect(first.every((t) => Number.isInteger(t) && t >= 0 && t <= ids['<end_of_utterance>']!)).toBe(true);
    expect(second).toEqual(first);
  }, 120_000);

  it('replies differently to different images, even where the prompt tokens are the same, so the image reaches the decoder', async () => {
    const white = () => image(80, 120, () => [250, 250, 250]);
    // Two 80×120 images: the same tiles, so the same input_ids; only the pixels differ.
    const [x, y] = [await inputs(stripes()), await inputs(white())];
    expect(Array.from(y.input_ids!.data as BigInt64Array)).toEqual(Array.from(x.input_ids!.data as BigInt64Array));
    const [a, b, c] = [await reply(stripes()), await reply(gradient()), await reply(white())];
    expect(c).not.toEqual(a);
    expect(b).not.toEqual(a);
    expect(c).not.toEqual(b);
  }, 120_000);
});
