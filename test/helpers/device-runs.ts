// A model loaded on a device and run through the real scheduler, each decode step's KV
// cache recorded (where it was: the GPU's buffers or host arrays), for the tests that
// compare a device with the CPU.
import { nodeBackend } from '../../src/backends/node.js';
import type { Backend } from '../../src/backends/types.js';
import type { PrefixCache } from '../../src/engine/kv/prefix-cache.js';
import { CausalLM } from '../../src/engine/models/causal-lm.js';
import type { ChatMessage, Device, SamplingParams } from '../../src/engine/protocol.js';
import { Scheduler } from '../../src/engine/scheduler.js';
import { Sequence } from '../../src/engine/sequence.js';
import { TextCodec } from '../../src/engine/text/codec.js';

export const GREEDY: SamplingParams = {
  temperature: 0, top_p: 1, top_k: -1, min_p: 0, presence_penalty: 0, frequency_penalty: 0,
  stop: [], stop_token_ids: [], ignore_eos: true, logprobs: -1, max_tokens: 3,
};

export const user = (content: string): ChatMessage[] => [{ role: 'user', content }];

export interface DeviceModel {
  lm: CausalLM;
  codec: TextCodec;
}

/** A fixture folder's model on `device` (its fp32 file unless told), without the engine's warm-up. */
export async function loadOn(device: Device, folder: string, dtype = 'fp32', backend: Backend = nodeBackend(device)): Promise<DeviceModel> {
  const entry = { id: `svc/${folder.split('/').pop()}`, task: 'chat' as const, class: 'tiny', context_length: 4096, source: folder, dtype: { [device]: dtype }, price: { input_per_1m: 0, output_per_1m: 0 } };
  return { lm: await CausalLM.load(backend, folder, entry), codec: await TextCodec.load(folder, { localOnly: true }) };
}

/** A scheduler over `m`, recording for each decode step its rows and whether its cache was all on the GPU. */
export function recordingScheduler(m: DeviceModel, opts: { prefixCache?: PrefixCache; prefillChunk?: number } = {}) {
  const steps: { rows: number; onGpu: boolean }[] = [];
  const spy = Object.create(m.lm) as CausalLM;
  spy.decode = (tokens, batch, timings) => {
    steps.push({ rows: tokens.length, onGpu: batch.data === null && !!batch.device?.every((t) => t.location === 'gpu-buffer') });
    return m.lm.decode(tokens, batch, timings);
  };
  return { s: new Scheduler(spy, opts), steps };
}

let n = 0;
/** Submits one chat request; resolves with its result (token ids, cached tokens, ...). */
export function generate(s: Scheduler, m: DeviceModel, messages: ChatMessage[], sampling: Partial<SamplingParams> = {}) {
  const { ids, text } = m.codec.encodeChat(messages);
  const seq = new Sequence(
    { id: `d${n++}`, model: 'm', prompt: { messages }, sampling: { ...GREEDY, ...sampling } },
    ids, text, m.codec, { eosIds: m.lm.eosIds, contextLength: 4096 }, () => undefined,
  );
  s.submit(seq);
  return seq.result;
}

/** Resolves once the scheduler holds no sequence: a result arrives before its row is stored and leaves the batch. */
export async function idle(s: Scheduler): Promise<void> {
  while (s.stats().running + s.stats().waiting > 0) await new Promise((r) => setTimeout(r, 5));
}
