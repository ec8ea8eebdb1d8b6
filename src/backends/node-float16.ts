// onnxruntime-node 1.30's binding cannot read a Float16Array: fed one, it refuses with "not
// enough space: expected N, got 0". Node 24 has Float16Array, so onnxruntime-common holds
// every float16 tensor (outputs too, and the Uint16Array data Hearth builds) in one, and an
// fp16 model's KV cache fed back fails on the second step. The same bits viewed as a
// Uint16Array go through, as on Node 20; a Tensor would turn them back, so the feed is the
// plain object the binding reads.
import type * as ort from 'onnxruntime-node';

type Feeds = Record<string, ort.OnnxValue>;

function asUint16(value: ort.OnnxValue): ort.OnnxValue {
  const t = value as ort.Tensor;
  if (t.type !== 'float16' || t.location !== 'cpu' || t.data instanceof Uint16Array) return value;
  const data = t.data as unknown as ArrayBufferView & { length: number };
  const bits = new Uint16Array(data.buffer, data.byteOffset, data.length);
  return { type: 'float16', dims: t.dims, data: bits, location: 'cpu', size: t.size } as unknown as ort.Tensor;
}

/** Makes `session.run` feed float16 tensors as Uint16Array where the runtime holds them as Float16Array. */
export function feedHalvesAsUint16(session: ort.InferenceSession): ort.InferenceSession {
  if (typeof (globalThis as { Float16Array?: unknown }).Float16Array === 'undefined') return session;
  const run = session.run.bind(session) as (feeds: Feeds, ...rest: unknown[]) => Promise<ort.InferenceSession.ReturnType>;
  session.run = ((feeds: Feeds, ...rest: unknown[]) =>
    run(Object.fromEntries(Object.entries(feeds).map(([k, v]) => [k, asUint16(v)])), ...rest)) as typeof session.run;
  return session;
}
