// The Qwen2-VL fixture (models/exports/qwen2vl.ts) on transformers.js, the reference: its own
// Qwen2VLProcessor and Qwen2VLForConditionalGeneration load the folder offline, expand an image
// into the <|image_pad|> tokens its grid implies (dynamic resolution), and generate from a chat
// with an image part, the reply depending on the pixels; and the decoder's multimodal rotary
// embedding (M-RoPE) is plain RoPE when its three position streams agree.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AutoProcessor, Qwen2VLForConditionalGeneration, RawImage, type PreTrainedModel, type Processor, type Tensor } from '@huggingface/transformers';
import * as ort from 'onnxruntime-node';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_VOCAB, decoderGraph, PATCH_DIM, QWEN2VL_DIMS, QWEN2VL_VOCAB, qwen2vlTextWeights, qwen2vlTokenIds } from '../../models/exports/qwen2vl.js';
import { QWEN2VL_SEED } from '../../models/fixtures.js';
import { Rng } from '../../models/rng.js';
import { concatChunks, encodeModel } from '../../src/onnx/proto.js';
import { transformersOnExports } from '../helpers/exports.js';
import { noisePng } from '../helpers/vision.js';

const NAME = 'qwen2vl-export';
const NEW_TOKENS = 8;
const ids = qwen2vlTokenIds();
const H = QWEN2VL_DIMS.text.hidden;

const fromPng = async (png: Buffer) => RawImage.fromBlob(new Blob([png as BlobPart]));
/** 60×44 seeded noise (→ 56×56: a 4×4 patch grid, 4 image tokens). */
const noise = async (seed = 7) => fromPng(await noisePng(60, 44, seed));
/** 100×50 gradient (→ 112×56: a 4×8 patch grid, 8 image tokens). */
async function gradient(): Promise<RawImage> {
  const [w, h] = [100, 50];
  const rgb = Buffer.alloc(w * h * 3);
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) rgb.set([Math.round((x * 255) / (w - 1)), 120, Math.round((y * 255) / (h - 1))], (y * w + x) * 3);
  return fromPng(await sharp(rgb, { raw: { width: w, height: h, channels: 3 } }).png().toBuffer());
}

const imageChat = (text: string) => [{ role: 'user', content: [{ type: 'image' }, { type: 'text', text }] }];

let dir: string;
let processor: Processor;
let model: PreTrainedModel;

beforeAll(async () => {
  dir = join(await transformersOnExports(), NAME);
  processor = await AutoProcessor.from_pretrained(NAME, { local_files_only: true });
  model = await Qwen2VLForConditionalGeneration.from_pretrained(NAME, { dtype: 'fp32', device: 'cpu', local_files_only: true });
}, 600_000);

afterAll(async () => {
  await model?.dispose();
});

const list = (t: Tensor) => Array.from(t.data as BigInt64Array, Number);
const count = (tokens: number[], id: number) => tokens.filter((t) => t === id).length;

/** The processor's inputs for a chat asking `text` about `img` (or a text-only chat). */
async function inputs(img: RawImage | null, text = 'What is this?'): Promise<Record<string, Tensor>> {
  const chat = img ? imageChat(text) : [{ role: 'user', content: text }];
  const prompt = processor.apply_chat_template(chat as never, { add_generation_prompt: true }) as unknown as string;
  return (await processor(prompt, img ? [img] : null)) as Record<string, Tensor>;
}

/** Greedy new token ids. */
async function reply(x: Record<string, Tensor>): Promise<number[]> {
  const out = (await model.generate({ ...x, max_new_tokens: NEW_TOKENS, do_sample: false } as never)) as Tensor;
  return list(out).slice(x.input_ids!.dims.at(-1)!);
}

describe('the Qwen2-VL fixture on transformers.js', () => {
  it("loads as Qwen2-VL with Qwen2-VL-2B-Instruct's processor, tokens and chat template", () => {
    expect(model.constructor.name).toBe('Qwen2VLForConditionalGeneration');
    expect(processor.constructor.name).toBe('Qwen2VLProcessor');
    const tokenizer = (processor as unknown as { tokenizer: { encode(t: string, o: object): number[] } }).tokenizer;
    for (const [token, id] of Object.entries(ids)) expect(tokenizer.encode(token, { add_special_tokens: false })).toEqual([id]);
    const config = model.config as unknown as Record<string, unknown>;
    expect(config).toMatchObject({
      model_type: 'qwen2_vl',
      image_token_id: ids['<|image_pad|>'],
      video_token_id: ids['<|video_pad|>'],
      vision_start_token_id: ids['<|vision_start|>'],
      vision_end_token_id: ids['<|vision_end|>'],
      eos_token_id: ids['<|im_end|>'],
      vocab_size: QWEN2VL_VOCAB,
      rope_scaling: { type: 'mrope', mrope_section: [2, 3, 3] },
    });
    expect(processor.apply_chat_template(imageChat('Describe it.') as never, { add_generation_prompt: true })).toBe(
      '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n<|vision_start|><|image_pad|><|vision_end|>Describe it.<|im_end|>\n<|im_start|>assistant\n',
    );
  });

  it('expands the image into grid_t·grid_h·grid_w / 4 image tokens, the grid following the picture size, and generates 8 tokens', async () => {
    const grids: number[][] = [];
    const replies: number[][] = [];
    for (const img of [await noise(), await gradient()]) {
      const x = await inputs(img);
      const grid = list(x.image_grid_thw!);
      const patches = grid[0]! * grid[1]! * grid[2]!;
      const tokens = list(x.input_ids!);
      expect(x.pixel_values!.dims).toEqual([patches, PATCH_DIM]);
      expect(count(tokens, ids['<|image_pad|>']!)).toBe(patches / 4);
      expect(count(tokens, ids['<|vision_start|>']!)).toBe(1);
      const start = tokens.indexOf(ids['<|vision_start|>']!);
      expect(tokens[start + patches / 4 + 1]).toBe(ids['<|vision_end|>']);
      const features = (await (model as unknown as { encode_image(a: object): Promise<Tensor> }).encode_image({ pixel_values: x.pixel_values, image_grid_thw: x.image_grid_thw })) as Tensor;
      expect(features.dims).toEqual([patches / 4, H]);
      const out = await reply(x);
      expect(out).toHaveLength(NEW_TOKENS);
      expect(out.every((t) => Number.isInteger(t) && t >= 0 && t < BASE_VOCAB)).toBe(true);
      grids.push(grid);
      replies.push(out);
    }
    expect(grids).toEqual([
      [1, 4, 4],
      [1, 4, 8],
    ]);
    expect(replies[1]).not.toEqual(replies[0]);
  }, 120_000);

  it('replies differently to two pictures of the same size (the same prompt tokens), so the image reaches the decoder', async () => {
    const [x, y] = [await inputs(await noise(1)), await inputs(await noise(2))];
    expect(list(y.input_ids!)).toEqual(list(x.input_ids!));
    expect(await reply(x)).not.toEqual(await reply(y));
    expect(await reply(await inputs(await noise(1)))).toEqual(await reply(x));
  }, 120_000);

  it('generates from a text-only chat through the tokenizer (no image)', async () => {
    const x = await inputs(null, 'Tell me a story.');
    const tokens = list(x.input_ids!);
    expect(x.pixel_values).toBeUndefined();
    expect(count(tokens, ids['<|image_pad|>']!)).toBe(0);
    expect(tokens.slice(0, 1)).toEqual([ids['<|im_start|>']]);
    const out = await reply(x);
    expect(out).toHaveLength(NEW_TOKENS);
    expect(out.every((t) => t >= 0 && t < BASE_VOCAB)).toBe(true);
  }, 120_000);
});

describe("the fixture's M-RoPE decoder", () => {
  const w = qwen2vlTextWeights(QWEN2VL_SEED);
  const { layers, kvHeads, headDim } = w.config;
  const session = (section: readonly [number, number, number] | null) => ort.InferenceSession.create(concatChunks(encodeModel(decoderGraph(w, section))));
  const [B, S] = [2, 6];
  const embeds = new Rng(5).normals(B * S * H, 0.25);
  // Row 0 left-padded by two; positions count the real tokens (pads at 1, as transformers.js fills them).
  const mask = [0, 0, 1, 1, 1, 1, ...Array<number>(S).fill(1)];
  const positions = [1, 1, 0, 1, 2, 3, 0, 1, 2, 3, 4, 5];
  const i64 = (v: number[], dims: number[]) => new ort.Tensor('int64', BigInt64Array.from(v, BigInt), dims);
  const emptyPast = () =>
    Object.fromEntries(
      Array.from({ length: layers }, (_, i) => ['key', 'value'].map((k) => [`past_key_values.${i}.${k}`, new ort.Tensor('float32', new Float32Array(0), [B, kvHeads, 0, headDim])])).flat(),
    );
  /** One pass: `streams` three position lists for M-RoPE, one for plain. */
  async function run(s: ort.InferenceSession, x: Float32Array, m: number[], streams: number[][], past: Record<string, ort.Tensor> = emptyPast()) {
    const n = x.length / (B * H);
    const position_ids = streams.length === 3 ? i64(streams.flat(), [3, B, n]) : i64(streams[0]!, [B, n]);
    const out = await s.run({ inputs_embeds: new ort.Tensor('float32', x, [B, n, H]), attention_mask: i64(m, [B, m.length / B]), position_ids, ...past });
    const present = Object.fromEntries(Object.entries(out).filter(([k]) => k.startsWith('present.')).map(([k, v]) => [k.replace('present.', 'past_key_values.'), v]));
    return { logits: out.logits!.data as Float32Array, present };
  }
  const maxDiff = (a: Float32Array, b: Float32Array) => a.reduce((m, v, i) => Math.max(m, Math.abs(v - b[i]!)), 0);

  it('is the decoder_model_merged.onnx of the fixture, with position_ids [3, batch, seq]', async () => {
    const bytes = concatChunks(encodeModel(decoderGraph(w)));
    expect(Buffer.from(readFileSync(join(dir, 'onnx', 'decoder_model_merged.onnx'))).equals(Buffer.from(bytes))).toBe(true);
    const s = await ort.InferenceSession.create(bytes);
    expect(s.inputNames).toEqual(['inputs_embeds', 'attention_mask', 'position_ids', ...Array.from({ length: layers }, (_, i) => [`past_key_values.${i}.key`, `past_key_values.${i}.value`]).flat()]);
    await s.release();
  });

  it('gives the logits of plain RoPE of the same weights when the three streams are equal, prefill and a cached step', async () => {
    const [mrope, plain] = [await session(QWEN2VL_DIMS.mropeSection), await session(null)];
    const a = await run(mrope, embeds, mask, [positions, positions, positions]);
    const b = await run(plain, embeds, mask, [positions]);
    expect(a.logits).toHaveLength(B * S * QWEN2VL_VOCAB);
    expect(maxDiff(a.logits, b.logits)).toBeLessThan(1e-5);
    const next = new Rng(6).normals(B * H, 0.25);
    const step = [4, 6];
    const a2 = await run(mrope, next, [...mask.slice(0, S), 1, ...mask.slice(S), 1], [step, step, step], a.present);
    const b2 = await run(plain, next, [...mask.slice(0, S), 1, ...mask.slice(S), 1], [step], b.present);
    expect(maxDiff(a2.logits, b2.logits)).toBeLessThan(1e-5);
    await Promise.all([mrope.release(), plain.release()]);
  });

  it('takes each frequency from the stream of its section: one section whole is plain RoPE of that stream', async () => {
    const plain = await session(null);
    const streams = [positions, positions.map((p) => 2 * p + 9), positions.map((p) => 7 * p + 20)];
    const mixed = await session(QWEN2VL_DIMS.mropeSection);
    const changed = (await run(mixed, embeds, mask, streams)).logits;
    await mixed.release();
    const base = (await run(plain, embeds, mask, [positions])).logits;
    expect(maxDiff(changed, base)).toBeGreaterThan(1e-4); // the height and width streams move the logits
    for (const k of [0, 1, 2]) {
      const section: [number, number, number] = [0, 0, 0];
      section[k] = headDim / 2;
      const one = await session(section);
      const single = (await run(one, embeds, mask, streams)).logits;
      expect(maxDiff(single, (await run(plain, embeds, mask, [streams[k]!])).logits)).toBeLessThan(1e-5);
      await one.release();
    }
    // Sections in order: spreading the temporal stream alone (frequencies 0–1, the fastest) moves the logits far more than the width stream alone (5–7, the slowest).
    // (Spreading, not shifting: a constant shift of every position leaves rotary attention as it was.)
    const mrope = await session(QWEN2VL_DIMS.mropeSection);
    const moved = async (k: number) => {
      const shifted = [0, 1, 2].map((i) => (i === k ? positions.map((p) => 3 * p) : positions));
      return maxDiff((await run(mrope, embeds, mask, shifted)).logits, base);
    };
    const [temporal, width] = [await moved(0), await moved(2)];
    expect(width).toBeGreaterThan(0);
    expect(temporal).toBeGreaterThan(100 * width);
    await Promise.all([mrope.release(), plain.release()]);
  });
});
