// `hearth models verify`: loads a checkpoint the way the engine serves it and checks
// it against transformers.js on the same folder, file and device: greedy tokens and
// prompt length for a few prompts (a VLM's with pictures: verify-vision.ts), plus decode
// speed. Node only.
import { AutoModelForCausalLM, Tensor } from '@huggingface/transformers';
import { nodeBackend } from '../backends/node.js';
import { decodeImageNode } from '../backends/node-image.js';
import { dtypeFor, isVisionType, onnxFileForDtype, readJson, joinPath, textConfigOf, VLM_GRAPHS } from '../engine/models/files.js';
import { CausalLM } from '../engine/models/causal-lm.js';
import { checkFit, estimateFit, size, type FitEstimate } from '../engine/models/fit.js';
import type { DecoderInterface } from '../engine/models/interface.js';
import type { CatalogEntry, ChatMessage, Device, GenerateRequest, SamplingParams } from '../engine/protocol.js';
import { Scheduler } from '../engine/scheduler.js';
import { Sequence } from '../engine/sequence.js';
import { TextCodec } from '../engine/text/codec.js';
import { contentText } from '../engine/text/content.js';
import { VisionModel, type VisionPrompt } from '../engine/vision/vision-model.js';
import { visionPrompts, visionReference } from './verify-vision.js';

export const VERIFY_PROMPTS: ChatMessage[][] = [
  [{ role: 'user', content: 'What is the capital of France?' }],
  [{ role: 'system', content: 'You answer in one sentence.' }, { role: 'user', content: 'Why is the sky blue?' }],
  [{ role: 'user', content: 'Write a haiku about the sea.' }],
];

export interface VerifyOptions {
  folder: string;
  dtype?: string;
  device?: Device;
  /** Greedy tokens compared per prompt. */
  maxTokens?: number;
}

export interface PromptCheck {
  prompt: string;
  promptTokens: { hearth: number; reference: number };
  tokens: { hearth: number[]; reference: number[] };
  equal: boolean;
}

export interface VerifyReport {
  dtype: string;
  device: Device;
  file: string;
  io: DecoderInterface;
  fit: FitEstimate | undefined;
  /** The context the KV estimate is for. */
  contextLength: number;
  tokensPerSecond: number;
  prompts: PromptCheck[];
  parity: boolean;
}

const greedy = (max: number, ignoreEos = false): SamplingParams => ({
  max_tokens: max, temperature: 0, top_p: 1, top_k: -1, min_p: 0, presence_penalty: 0, frequency_penalty: 0,
  stop: [], stop_token_ids: [], ignore_eos: ignoreEos, logprobs: -1,
});

export async function verifyCheckpoint(opts: VerifyOptions): Promise<VerifyReport> {
  const device = opts.device ?? 'cpu';
  const backend = nodeBackend(device);
  const config = (await readJson<{ max_position_embeddings?: number; model_type?: string; text_config?: { max_position_embeddings?: number } }>(backend, joinPath(opts.folder, 'config.json'))) ?? {};
  const vision = isVisionType(config.model_type);
  const positions = textConfigOf(config).max_position_embeddings;
  const entry: CatalogEntry = {
    id: 'svc/verify', task: 'chat', class: '?', context_length: Math.min(positions ?? 4096, 4096),
    source: opts.folder, ...(opts.dtype ? { dtype: { [device]: opts.dtype } } : {}), price: { input_per_1m: 0, output_per_1m: 0 },
  };
  const dtype = dtypeFor(entry, device);
  const fit = await estimateFit(backend, opts.folder, entry);
  if (fit && backend.budget) checkFit(entry.id, fit, await backend.budget());
  const codec = await TextCodec.load(opts.folder, { localOnly: true, files: backend });
  const lm = await CausalLM.load(backend, opts.folder, entry);
  const vlm = vision ? await VisionModel.load(backend, opts.folder, entry) : undefined;
  // A VLM's template reads each message's content as parts.
  codec.readsParts = vision;
  const max = opts.maxTokens ?? 16;
  const prompts: PromptCheck[] = [];
  let tokensPerSecond = 0;
  try {
    await lm.warmUp();
    const scheduler = new Scheduler(lm);
    let n = 0;
    const generate = async (messages: ChatMessage[], sampling: SamplingParams) => {
      const { ids, text, images, cacheKey, rope }: VisionPrompt = vlm ? await vlm.encodeChat(codec, { messages }, decodeImageNode) : codec.encodeChat(messages);
      const req: GenerateRequest = { id: `v${n++}`, model: entry.id, prompt: { messages }, sampling };
      const seq = new Sequence(req, ids, text, codec, { eosIds: lm.eosIds, contextLength: entry.context_length }, () => undefined, undefined, { images, cacheKey, rope });
      scheduler.submit(seq);
      return seq.result;
    };
    const t0 = performance.now();
    const timed = await generate(VERIFY_PROMPTS[0]!, greedy(32, true));
    tokensPerSecond = timed.completion_tokens / ((performance.now() - t0) / 1000);

    // The chats checked, and transformers.js's prompt length and greedy tokens for each.
    const chats = vlm ? await visionPrompts() : VERIFY_PROMPTS;
    const theirs = vlm ? await visionReference(opts.folder, dtype, device, chats, max) : await textReference(opts.folder, dtype, device, chats, max, codec);
    for (const [i, messages] of chats.entries()) {
      const ours = await generate(messages, greedy(max));
      const ref = theirs[i]!;
      const picture = messages.some((m) => Array.isArray(m.content) && m.content.some((p) => p.type === 'image'));
      prompts.push({
        prompt: `${picture ? '[picture] ' : ''}${contentText(messages.at(-1)!.content)}`,
        promptTokens: { hearth: ours.prompt_tokens, reference: ref.promptIds },
        tokens: { hearth: ours.token_ids, reference: ref.tokens },
        equal: ours.prompt_tokens === ref.promptIds && ours.token_ids.join() === ref.tokens.join(),
      });
    }
  } finally {
    await lm.dispose();
    await vlm?.dispose();
  }
  return {
    dtype, device, file: onnxFileForDtype(dtype, entry.id, vision ? VLM_GRAPHS.decoder : 'model'), io: lm.io, fit, contextLength: entry.context_length, tokensPerSecond, prompts,
    parity: prompts.every((p) => p.equal),
  };
}

/** transformers.js's causal LM on the same file: each chat's prompt length and greedy tokens. */
async function textReference(folder: string, dtype: string, device: Device, chats: ChatMessage[][], max: number, codec: TextCodec) {
  const reference = await AutoModelForCausalLM.from_pretrained(folder, { dtype: dtype as never, device: device as never, local_files_only: true });
  try {
    const out: { promptIds: number; tokens: number[] }[] = [];
    for (const messages of chats) {
      const ids = (codec.tokenizer.apply_chat_template(messages as never, { add_generation_prompt: true, return_dict: false, return_tensor: false }) as number[]).map(Number);
      const generated = (await reference.generate({
        input_ids: new Tensor('int64', BigInt64Array.from(ids, BigInt), [1, ids.length]),
        attention_mask: new Tensor('int64', new BigInt64Array(ids.length).fill(1n), [1, ids.length]),
        max_new_tokens: max,
        // Plain greedy, as Hearth's side runs: generation_config.json's repetition_penalty (Qwen2.5's 1.05–1.1) would apply even without sampling.
        do_sample: false,
        repetition_penalty: 1,
      } as never)) as { data: BigInt64Array };
      out.push({ promptIds: ids.length, tokens: Array.from(generated.data.slice(ids.length), Number) });
    }
    return out;
  } finally {
    await reference.dispose();
  }
}

/** The report as rows of (check, result) for a table. */
export function reportRows(r: VerifyReport): [string, string][] {
  const io = r.io;
  const rows: [string, string][] = [
    ['interface', `${io.layers} layers, KV ${io.kvType} [${io.kvHeads} heads × ${io.headDim}], logits ${io.logitsType}` +
      `; position_ids ${io.positionIds ? `${io.multimodalPositions ? 'multimodal [3, batch, seq] ' : ''}from ${io.positionStart}` : 'absent'}; num_logits_to_keep ${io.numLogitsToKeep ? 'fed' : 'absent'}` +
      `; use_cache_branch ${io.useCacheBranch ? 'fed' : 'absent'}`],
    ['dtype', `${r.dtype} (${r.file})`],
    ['device', r.device],
  ];
  if (r.fit) rows.push(['size', `${size(r.fit.weightsBytes)} of weights; KV ${size(r.fit.kvBytes)} for ${r.contextLength} tokens`]);
  rows.push(['tokens/s', `${r.tokensPerSecond.toFixed(1)} (one stream, 32 greedy tokens)`]);
  for (const p of r.prompts) {
    const what = p.equal
      ? `equal (${p.tokens.hearth.length} tokens, ${p.promptTokens.hearth} prompt tokens)`
      : `DIFFERENT: prompt tokens ${p.promptTokens.hearth} vs ${p.promptTokens.reference}; tokens ${p.tokens.hearth.join(',')} vs ${p.tokens.reference.join(',')}`;
    rows.push([`parity "${p.prompt.slice(0, 24)}"`, what]);
  }
  rows.push(['parity', r.parity ? 'PASS: greedy tokens and prompt length equal transformers.js' : 'FAIL']);
  return rows;
}
