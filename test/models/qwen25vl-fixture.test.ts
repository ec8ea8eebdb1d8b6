// The Qwen2.5-VL fixture (models/exports/qwen25vl.ts) on transformers.js, the reference: its own
// Qwen2_5_VLProcessor and Qwen2_5_VLForConditionalGeneration load the folder offline (the text
// model from text_config), feed the vision encoder image_grid_thw, and generate from a chat with
// an image, the reply depending on the pixels.
import { AutoProcessor, Qwen2_5_VLForConditionalGeneration, RawImage, type PreTrainedModel, type Processor, type Tensor } from '@huggingface/transformers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_VOCAB, PATCH_DIM } from '../../models/exports/qwen2vl.js';
import { QWEN25VL_DIMS, QWEN25VL_VOCAB, qwen25vlTokenIds } from '../../models/exports/qwen25vl.js';
import { transformersOnExports } from '../helpers/exports.js';
import { noisePng } from '../helpers/vision.js';

const NAME = 'qwen25vl-export';
const NEW_TOKENS = 8;
const ids = qwen25vlTokenIds();

/** width × height seeded noise, as transformers.js reads it. */
const noise = async (width: number, height: number, seed: number) => RawImage.fromBlob(new Blob([(await noisePng(width, height, seed)) as BlobPart]));
const imageChat = (text: string) => [{ role: 'user', content: [{ type: 'image' }, { type: 'text', text }] }];

let processor: Processor;
let model: PreTrainedModel;

beforeAll(async () => {
  await transformersOnExports();
  processor = await AutoProcessor.from_pretrained(NAME, { local_files_only: true });
  model = await Qwen2_5_VLForConditionalGeneration.from_pretrained(NAME, { dtype: 'fp32', device: 'cpu', local_files_only: true });
}, 600_000);

afterAll(async () => {
  await model?.dispose();
});

const list = (t: Tensor) => Array.from(t.data as BigInt64Array, Number);

async function inputs(img: RawImage, text = 'What is this?'): Promise<Record<string, Tensor>> {
  const prompt = processor.apply_chat_template(imageChat(text) as never, { add_generation_prompt: true }) as unknown as string;
  return (await processor(prompt, [img])) as Record<string, Tensor>;
}

async function reply(x: Record<string, Tensor>): Promise<number[]> {
  const out = (await model.generate({ ...x, max_new_tokens: NEW_TOKENS, do_sample: false } as never)) as Tensor;
  return list(out).slice(x.input_ids!.dims.at(-1)!);
}

describe('the Qwen2.5-VL fixture on transformers.js', () => {
  it("loads as Qwen2.5-VL: its processor, the text model from text_config, Qwen2.5's 22 added tokens, the chat template", () => {
    expect(model.constructor.name).toBe('Qwen2_5_VLForConditionalGeneration');
    expect(processor.constructor.name).toBe('Qwen2_5_VLProcessor');
    const tokenizer = (processor as unknown as { tokenizer: { encode(t: string, o: object): number[] } }).tokenizer;
    expect(Object.keys(ids)).toHaveLength(22);
    for (const [token, id] of Object.entries(ids)) expect(tokenizer.encode(token, { add_special_tokens: false })).toEqual([id]);
    const config = model.config as unknown as Record<string, unknown>;
    expect(config).toMatchObject({
      model_type: 'qwen2_5_vl',
      image_token_id: ids['<|image_pad|>'],
      vision_start_token_id: ids['<|vision_start|>'],
      text_config: { model_type: 'qwen2_5_vl_text', vocab_size: QWEN25VL_VOCAB, rope_scaling: { mrope_section: [2, 3, 3] } },
      vision_config: { spatial_merge_size: 2, window_size: 112, out_hidden_size: QWEN25VL_DIMS.text.hidden },
    });
    expect(config.hidden_size).toBeUndefined(); // the text model's parameters are in text_config only
    expect(processor.apply_chat_template(imageChat('Describe it.') as never, { add_generation_prompt: true })).toBe(
      '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n<|vision_start|><|image_pad|><|vision_end|>Describe it.<|im_end|>\n<|im_start|>assistant\n',
    );
  });

  it("runs the vision encoder on image_grid_thw (its session's input) and generates text from a chat with an image", async () => {
    const session = (model as unknown as { sessions: Record<string, { inputNames: string[] }> }).sessions.vision_encoder!;
    expect(session.inputNames).toEqual(['pixel_values', 'image_grid_thw']);
    const x = await inputs(await noise(100, 50, 3)); // → 112×56: a 4×8 patch grid, 8 image tokens
    expect(list(x.image_grid_thw!)).toEqual([1, 4, 8]);
    expect(x.pixel_values!.dims).toEqual([32, PATCH_DIM]);
    expect(list(x.input_ids!).filter((t) => t === ids['<|image_pad|>'])).toHaveLength(8);
    const out = await reply(x);
    expect(out).toHaveLength(NEW_TOKENS);
    expect(out.every((t) => Number.isInteger(t) && t >= 0 && t < BASE_VOCAB)).toBe(true);
  }, 120_000);

  it('replies differently to two pictures of the same size, and the same to the same one again', async () => {
    const [x, y] = [await inputs(await noise(60, 44, 1)), await inputs(await noise(60, 44, 2))];
    expect(list(y.input_ids!)).toEqual(list(x.input_ids!));
    const first = await reply(x);
    expect(await reply(y)).not.toEqual(first);
    expect(await reply(await inputs(await noise(60, 44, 1)))).toEqual(first);
  }, 120_000);
});
