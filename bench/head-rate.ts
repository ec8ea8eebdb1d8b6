// What each form of the sampling head costs a decode step (DESIGN.md "Real-size models at GPU
// speed"): the graph-rate loop of graph-rate.ts with the logits left where the model wrote them
// (on WebGPU a device buffer), then one head run a step. For each form, the median of
// step + head (the figure to set against graph-rate's step, whose logits are read whole) and of
// the head run again on the same logits (the head alone, the device idle before it).
// Forms: `best` (greedy rows without logprobs: the maximum and its lowest id, a reduction over
// the row), `best_blocked` (the same within about 128 blocks, then over them: a GPU's form) and
// the 64 candidates with their normaliser by each top-K (`single`, `blocked`).
import type * as ort from 'onnxruntime-node';
import { nodeBackend } from '../src/backends/node.js';
import { logitsHeadGraph, type HeadOutputs, type HeadTopK } from '../src/engine/models/logits-head.js';

export interface HeadRate {
  batch: number;
  /** Median ms of a decode step and one head run after it. */
  step_and_head_ms: number;
  /** Median ms of a second head run on the same logits. */
  head_alone_ms: number;
  /** batch × 1000 ÷ step_and_head_ms. */
  tokens_per_s: number;
}

export interface HeadRateOptions {
  device: 'cpu' | 'webgpu';
  batches: number[];
  promptTokens: number;
  steps: number;
  forms?: HeadForm[];
}

export type HeadForm = 'best' | 'best_blocked' | `candidates_${HeadTopK}`;
export const HEAD_FORMS: HeadForm[] = ['best', 'best_blocked', 'candidates_single', 'candidates_blocked'];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round = (x: number, d = 3) => Math.round(x * 10 ** d) / 10 ** d;

/** Each form's rates at each batch: `rates[form][batch]`. */
export async function headRates(modelPath: string, o: HeadRateOptions): Promise<Record<string, Record<number, HeadRate>>> {
  const backend = nodeBackend(o.device);
  const probe = (await backend.createSession(modelPath)) as unknown as ort.InferenceSession;
  const outputs = probe.outputNames.filter((n) => n.startsWith('present.') || n === 'logits');
  const logitsMeta = probe.outputMetadata.find((m) => m.name === 'logits') as { type?: string; shape?: (number | string)[] } | undefined;
  await probe.release();
  const vocab = Number(logitsMeta?.shape?.at(-1));
  const logitsType = logitsMeta?.type === 'float16' ? 'float16' : 'float32';
  const session = (await backend.createSession(modelPath, [], o.device === 'webgpu' ? outputs : [])) as unknown as ort.InferenceSession;
  const { Tensor } = backend as unknown as { Tensor: typeof ort.Tensor };
  const forms = o.forms ?? HEAD_FORMS;
  const heads: Record<string, ort.InferenceSession> = {};
  for (const form of forms) {
    const [outputsOf, topK] = form.startsWith('best') ? (['best', form === 'best' ? 'single' : 'blocked'] as [HeadOutputs, HeadTopK]) : (['candidates+lse', form.slice('candidates_'.length)] as [HeadOutputs, HeadTopK]);
    heads[form] = (await backend.createSession(logitsHeadGraph(vocab, logitsType, topK, outputsOf))) as unknown as ort.InferenceSession;
  }
  const past = session.inputMetadata.find((m) => m.name === 'past_key_values.0.key') as { shape?: (number | string)[]; type?: string };
  const [kvHeads, headDim] = [Number(past.shape?.[1]), Number(past.shape?.[3])];
  const kvType = past.type === 'float16' ? 'float16' : 'float32';
  const ints = (values: (n: number) => bigint, n: number, dims: number[]) => new Tensor('int64', BigInt64Array.from({ length: n }, (_, i) => values(i)), dims);
  const pastNames = session.inputNames.filter((n) => n.startsWith('past_key_values.'));
  const out: Record<string, Record<number, HeadRate>> = Object.fromEntries(forms.map((f) => [f, {}]));
  try {
    for (const batch of o.batches) {
      const rows = ints((i) => BigInt(i), batch, [batch]);
      const invT = new Tensor('float32', new Float32Array(batch).fill(1 / 0.7), [batch]);
      for (const form of forms) {
        const P = o.promptTokens;
        const feeds: Record<string, ort.Tensor> = { input_ids: ints((i) => BigInt(100 + ((i * 7) % 5000)), batch * P, [batch, P]), attention_mask: ints(() => 1n, batch * P, [batch, P]) };
        if (session.inputNames.includes('position_ids')) feeds.position_ids = ints((i) => BigInt(i % P), batch * P, [batch, P]);
        if (session.inputNames.includes('num_logits_to_keep')) feeds.num_logits_to_keep = new Tensor('int64', BigInt64Array.of(1n), []);
        for (const name of pastNames) feeds[name] = new Tensor(kvType, kvType === 'float16' ? new Uint16Array(0) : new Float32Array(0), [batch, kvHeads, 0, headDim]);
        let result = await session.run(feeds);
        const together: number[] = [];
        const alone: number[] = [];
        const headFeeds = (logits: ort.Tensor): Record<string, ort.Tensor> => (form.startsWith('best') ? { logits, rows } : { logits, rows, inv_temperature: invT });
        for (let s = 0; s < 2 + o.steps; s++) {
          const at = P + s;
          const step: Record<string, ort.Tensor> = { input_ids: ints((i) => BigInt(200 + ((s * 31 + i * 17) % 5000)), batch, [batch, 1]), attention_mask: ints(() => 1n, batch * (at + 1), [batch, at + 1]) };
          if (session.inputNames.includes('position_ids')) step.position_ids = ints(() => BigInt(at), batch, [batch, 1]);
          if (session.inputNames.includes('num_logits_to_keep')) step.num_logits_to_keep = new Tensor('int64', BigInt64Array.of(1n), []);
          for (const name of pastNames) step[name] = result[name.replace('past_key_values.', 'present.')]!;
          const t0 = performance.now();
          const next = await session.run(step);
          const picked = await heads[form]!.run(headFeeds(next.logits!));
          void picked.values!.data;
          const t1 = performance.now();
          void (await heads[form]!.run(headFeeds(next.logits!))).values!.data;
          const t2 = performance.now();
          if (s >= 2) together.push(t1 - t0), alone.push(t2 - t1);
          disposeDevice(result);
          result = next;
        }
        disposeDevice(result);
        const ms = median(together);
        out[form]![batch] = { batch, step_and_head_ms: round(ms), head_alone_ms: round(median(alone)), tokens_per_s: round((batch * 1000) / ms, 2) };
      }
    }
  } finally {
    await Promise.all([session.release(), ...Object.values(heads).map((h) => h.release())]);
  }
  return out;
}

function disposeDevice(outputs: Record<string, ort.Tensor>): void {
  for (const t of Object.values(outputs)) if (t.location === 'gpu-buffer') t.dispose();
}
