// transformers.js as the reference for Hearth on the Qwen VL fixtures (qwen2vl-export,
// qwen25vl-export): its own processor and *ForConditionalGeneration on the same folder, the
// prompt ids and greedy new tokens for images (or none) and a question.
import { AutoProcessor, cat, RawImage, type PreTrainedModel, type Processor, type Tensor } from '@huggingface/transformers';
import { withTextRopeDelta } from '../../src/ops/verify-vision.js';
import { transformersOnExports } from './exports.js';

/** A model class of transformers.js (Qwen2VLForConditionalGeneration, Qwen2_5_VLForConditionalGeneration). */
interface ModelClass {
  from_pretrained(name: string, options: object): Promise<PreTrainedModel>;
}

/**
 * The reference for fixture `name`: its processor, one more that processes several images as
 * Python does (processingEachImage), and the model as `cls`, offline, fp32 on the CPU, with
 * Python's rope delta for text-only prompts (transformers.js 4.3 adds the length where Python
 * subtracts it: withTextRopeDelta).
 */
export async function loadQwenVlReference(name: string, cls: ModelClass): Promise<{ processor: Processor; perImage: Processor; model: PreTrainedModel }> {
  await transformersOnExports();
  const processor = await AutoProcessor.from_pretrained(name, { local_files_only: true });
  const perImage = processingEachImage(await AutoProcessor.from_pretrained(name, { local_files_only: true }));
  const model = withTextRopeDelta(await cls.from_pretrained(name, { dtype: 'fp32', device: 'cpu', local_files_only: true }));
  return { processor, perImage, model };
}

/**
 * The processor with Python's handling of several images: each processed on its own, the patches
 * and grids concatenated. transformers.js 4.3's own stacks same-size images as frames of one
 * video-like grid and throws on different sizes, so only its per-image step is used. (It changes
 * `p`: give it a processor of its own.)
 */
export function processingEachImage(p: Processor): Processor {
  type Out = { pixel_values: Tensor; image_grid_thw: Tensor };
  const one = p.image_processor as unknown as ((image: RawImage) => Promise<Out>) & { config: unknown };
  const each = async (images: RawImage[]) => {
    const outs = await Promise.all(images.map((image) => one(image)));
    return { pixel_values: cat(outs.map((o) => o.pixel_values), 0), image_grid_thw: cat(outs.map((o) => o.image_grid_thw), 0) };
  };
  (p.components as Record<string, unknown>).image_processor = Object.assign(each, { config: one.config });
  return p;
}

/**
 * transformers.js's prompt ids and greedy new tokens for images (or none), then `text`, in one
 * user message. Several images need a processor from processingEachImage. Greedy as Hearth's:
 * generation_config.json's repetition_penalty (Qwen2.5-VL's 1.05) is set back to 1.
 */
export async function referenceReply(
  processor: Processor,
  model: PreTrainedModel,
  bytes: Uint8Array | Uint8Array[] | null,
  text: string,
  newTokens: number,
): Promise<{ prompt: number[]; reply: number[] }> {
  const all = bytes === null ? [] : Array.isArray(bytes) ? bytes : [bytes];
  const content = [...all.map(() => ({ type: 'image' })), { type: 'text', text }];
  const prompt = processor.apply_chat_template([{ role: 'user', content }] as never, { add_generation_prompt: true }) as unknown as string;
  const images = await Promise.all(all.map((b) => RawImage.fromBlob(new Blob([b as BlobPart]))));
  const inputs = (await processor(prompt, images.length ? images : null)) as Record<string, Tensor>;
  const ids = Array.from(inputs.input_ids!.data as BigInt64Array, Number);
  const out = (await model.generate({ ...inputs, max_new_tokens: newTokens, do_sample: false, repetition_penalty: 1 } as never)) as Tensor;
  return { prompt: ids, reply: Array.from(out.data as BigInt64Array, Number).slice(ids.length) };
}
