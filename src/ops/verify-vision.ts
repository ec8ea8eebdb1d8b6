// `hearth models verify` for a vision-language model: the prompts it checks (two pictures made
// here, and a text-only chat) and transformers.js's answer to them, from its own processor and
// image-text-to-text model on the same folder, file and device.
import { AutoModelForImageTextToText, AutoProcessor, RawImage, Tensor, type PreTrainedModel } from '@huggingface/transformers';
import sharp from 'sharp';
import type { ChatContentPart, ChatMessage, Device } from '../engine/protocol.js';

/** A horizontal colour ramp and a checkerboard, as PNGs: pictures no two tiles of which are alike. */
async function pictures(): Promise<Uint8Array[]> {
  const ramp = Buffer.alloc(96 * 64 * 3);
  for (let y = 0; y < 64; y++) for (let x = 0; x < 96; x++) ramp.set([x * 2.6, y * 4, 255 - x * 2.6], (y * 96 + x) * 3);
  const checks = Buffer.alloc(40 * 56 * 3);
  for (let y = 0; y < 56; y++) for (let x = 0; x < 40; x++) checks.fill(((x >> 3) + (y >> 3)) % 2 ? 230 : 20, (y * 40 + x) * 3, (y * 40 + x + 1) * 3);
  const png = (raw: Buffer, width: number, height: number) => sharp(raw, { raw: { width, height, channels: 3 } }).png().toBuffer();
  return [new Uint8Array(await png(ramp, 96, 64)), new Uint8Array(await png(checks, 40, 56))];
}

/** The chats a VLM is checked on: each picture with a question, and one without a picture. */
export async function visionPrompts(): Promise<ChatMessage[][]> {
  const [ramp, checks] = await pictures();
  const ask = (bytes: Uint8Array | undefined, text: string): ChatMessage[] => [
    { role: 'user', content: [...(bytes ? [{ type: 'image' as const, image: { bytes, param: 'messages[0].content[0]' } }] : []), { type: 'text', text }] },
  ];
  return [ask(ramp, 'Describe this picture.'), ask(checks, 'What pattern is this?'), ask(undefined, 'What is the capital of France?')];
}

/** transformers.js's prompt ids and greedy new tokens for each chat. */
export async function visionReference(folder: string, dtype: string, device: Device, prompts: ChatMessage[][], maxTokens: number) {
  const processor = await AutoProcessor.from_pretrained(folder, { local_files_only: true });
  const model = withTextRopeDelta(await AutoModelForImageTextToText.from_pretrained(folder, { dtype: dtype as never, device: device as never, local_files_only: true }));
  try {
    const out: { promptIds: number; tokens: number[] }[] = [];
    for (const messages of prompts) {
      const parts = messages.flatMap((m) => (Array.isArray(m.content) ? m.content : []));
      const images = await Promise.all(parts.flatMap((p: ChatContentPart) => (p.type === 'image' ? [RawImage.fromBlob(new Blob([p.image.bytes as BlobPart]))] : [])));
      const chat = messages.map((m) => ({ role: m.role, content: Array.isArray(m.content) ? m.content.map((p) => (p.type === 'image' ? { type: 'image' } : p)) : m.content }));
      const text = processor.apply_chat_template(chat as never, { add_generation_prompt: true }) as unknown as string;
      // Idefics3Processor 3.x fails without images: a text-only chat goes through its tokenizer, as the processor would.
      const tokenizer = (processor as unknown as { tokenizer: (t: string) => Record<string, Tensor> }).tokenizer;
      const inputs = (images.length ? await processor(text, images) : tokenizer(text)) as Record<string, Tensor>;
      const n = inputs.input_ids!.dims.at(-1)!;
      // Plain greedy, as Hearth's side runs (generation_config.json's repetition_penalty would apply even without sampling).
      const ids = (await model.generate({ ...inputs, max_new_tokens: maxTokens, do_sample: false, repetition_penalty: 1 } as never)) as Tensor;
      out.push({ promptIds: n, tokens: Array.from(ids.data as BigInt64Array, Number).slice(n) });
    }
    return out;
  } finally {
    await model.dispose();
  }
}

type RopeIndex = (inputIds: Tensor, attentionMask: Tensor | null) => [Tensor, Tensor];

/**
 * transformers.js 4.3 gives a Qwen2-VL prompt without images the rope delta max + 1 + length,
 * where Python's transformers (and Hearth) take max + 1 − length: its generated tokens would sit
 * 2 · length positions further on. The reference is given Python's delta; other models are
 * left as they are.
 */
export function withTextRopeDelta<M extends PreTrainedModel>(model: M): M {
  const m = model as unknown as { _get_text_only_rope_index?: RopeIndex };
  const original = m._get_text_only_rope_index;
  if (!original) return model;
  m._get_text_only_rope_index = (inputIds, attentionMask) => {
    const [positions] = original.call(model, inputIds, attentionMask);
    const [, batch, length] = positions.dims as [number, number, number];
    const data = positions.data as BigInt64Array;
    const deltas = BigInt64Array.from({ length: batch }, (_, b) => {
      let top = data[b * length]!;
      for (let i = 1; i < length; i++) if (data[b * length + i]! > top) top = data[b * length + i]!;
      return top + 1n - BigInt(length);
    });
    return [positions, new Tensor('int64', deltas, [batch, 1])];
  };
  return model;
}
