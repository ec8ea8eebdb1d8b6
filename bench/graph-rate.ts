// The graph's own decode rate at a batch: what no engine around it can beat, and the figure the
// real-shape targets are read against (DESIGN.md "Real-size models at GPU speed"). A greedy
// decode loop on the model file alone, on the engine's provider and session options: `batch`
// rows of `promptTokens` tokens prefilled in one run (not timed), then `steps` decode steps of
// one token a row, the cache fed back as it came out (on WebGPU: device buffers, never read),
// the logits read to the host. Each step's time is the run alone (input ids built before it);
// the figure is their median, so the context is the prompt plus about half the new tokens, as
// the engine's streams have it.
import type * as ort from 'onnxruntime-node';
import { nodeBackend } from '../src/backends/node.js';
import { countGcPauses } from './gc-pauses.js';

export interface GraphRate {
  batch: number;
  prompt_tokens: number;
  steps: number;
  /** Median ms of a decode step (one token a row), logits read to the host. */
  step_ms: number;
  /** batch × 1000 ÷ step_ms. */
  tokens_per_s: number;
  /** V8's GC pauses over the timed steps, ms a row: what onnxruntime-node's new output buffers cost with no engine around them. */
  gc_ms_per_row: number;
}

export interface GraphRateOptions {
  device: 'cpu' | 'webgpu';
  batches: number[];
  promptTokens: number;
  steps: number;
  /** Decode steps run before those timed, at each batch (kernels, buffer pools). */
  warmup?: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

/** [kv_heads, head_dim] and the element type of the session's past inputs. */
function pastShape(session: ort.InferenceSession): { kvHeads: number; headDim: number; type: 'float16' | 'float32' } {
  const meta = session.inputMetadata.find((m) => m.name === 'past_key_values.0.key') as { shape?: (number | string)[]; type?: string } | undefined;
  const [kvHeads, headDim] = [Number(meta?.shape?.[1]), Number(meta?.shape?.[3])];
  if (!(kvHeads > 0 && headDim > 0)) throw new Error('graph rate: no past_key_values.0.key of fixed kv_heads and head_dim');
  return { kvHeads, headDim, type: meta?.type === 'float16' ? 'float16' : 'float32' };
}

/** The graph's decode rate at each batch (see above), one batch after another on one session. */
export async function graphDecodeRates(modelPath: string, o: GraphRateOptions): Promise<Record<number, GraphRate>> {
  const backend = nodeBackend(o.device);
  const probe = (await backend.createSession(modelPath)) as unknown as ort.InferenceSession;
  const presents = probe.outputNames.filter((n) => n.startsWith('present.'));
  await probe.release();
  // On WebGPU the cache stays in device buffers, as the engine keeps it.
  const session = (await backend.createSession(modelPath, [], o.device === 'webgpu' ? presents : [])) as unknown as ort.InferenceSession;
  const { Tensor } = backend as unknown as { Tensor: typeof ort.Tensor };
  const { kvHeads, headDim, type } = pastShape(session);
  const ints = (values: (n: number) => bigint, n: number, dims: number[]) => new Tensor('int64', BigInt64Array.from({ length: n }, (_, i) => values(i)), dims);
  const out: Record<number, GraphRate> = {};
  try {
    for (const batch of o.batches) {
      const P = o.promptTokens;
      const empty = type === 'float16' ? new Uint16Array(0) : new Float32Array(0);
      const feeds: Record<string, ort.Tensor> = {
        input_ids: ints((i) => BigInt(100 + ((i * 7) % 5000)), batch * P, [batch, P]),
        attention_mask: ints(() => 1n, batch * P, [batch, P]),
      };
      if (session.inputNames.includes('position_ids')) feeds.position_ids = ints((i) => BigInt(i % P), batch * P, [batch, P]);
      for (const name of session.inputNames.filter((n) => n.startsWith('past_key_values.'))) feeds[name] = new Tensor(type, empty, [batch, kvHeads, 0, headDim]);
      let result = await session.run(feeds);
      const times: number[] = [];
      const warmup = o.warmup ?? 2;
      let gc: ReturnType<typeof countGcPauses> | undefined;
      for (let s = 0; s < warmup + o.steps; s++) {
        const past = P + s;
        if (s === warmup) gc = countGcPauses();
        const step: Record<string, ort.Tensor> = {
          input_ids: ints((i) => BigInt(200 + ((s * 31 + i * 17) % 5000)), batch, [batch, 1]),
          attention_mask: ints(() => 1n, batch * (past + 1), [batch, past + 1]),
        };
        if (session.inputNames.includes('position_ids')) step.position_ids = ints(() => BigInt(past), batch, [batch, 1]);
        for (const name of session.inputNames.filter((n) => n.startsWith('past_key_values.'))) step[name] = result[name.replace('past_key_values.', 'present.')]!;
        const t0 = performance.now();
        const next = await session.run(step);
        const ms = performance.now() - t0;
        // The logits as the host reads them (on WebGPU the run copied them back already).
        void next.logits!.data;
        if (s >= warmup) times.push(ms);
        disposeDevice(result);
        result = next;
      }
      disposeDevice(result);
      const pauses = (await gc?.stop()) ?? { ms: 0 };
      const stepMs = median(times);
      out[batch] = { batch, prompt_tokens: P, steps: o.steps, step_ms: round(stepMs, 3), tokens_per_s: round((batch * 1000) / stepMs), gc_ms_per_row: round(pauses.ms / (o.steps * batch), 4) };
    }
  } finally {
    await session.release();
  }
  return out;
}

/** Frees a run's outputs that live in device buffers (present.* on WebGPU). */
function disposeDevice(outputs: Record<string, ort.Tensor>): void {
  for (const t of Object.values(outputs)) if (t.location === 'gpu-buffer') t.dispose();
}
