// KV copy plans run on the GPU onnxruntime-web computes on: one copyBufferToBuffer per
// range into new buffers, so joining and leaving the batch never read the cache back.
//
// Ordering with onnxruntime-web (JSEP): its kernels are recorded into its own command
// encoder and submitted at its flush(); a run() that returns any CPU output (the logits
// always are) downloads it after the whole graph has been recorded, and that download
// flushes. So once run() has resolved, every write to its present.* buffers is already
// in the queue, and copies submitted here (on the same queue, between runs: the caller
// holds onnxruntime-web's call chain) come after them. Disposing a source afterwards is
// safe: an onnxruntime output's buffer goes back to its pool and is handed out again
// only to commands submitted later, and a buffer of ours is destroy()ed, which WebGPU
// defers until submitted commands that use it have completed.
import type { CopyPlan } from './kv.js';
import type { Tensor } from './types.js';

/** The parts of the WebGPU API used here (TypeScript's DOM library has no WebGPU types). */
interface GpuBuffer {
  size: number;
  destroy(): void;
  mapAsync(mode: number): Promise<void>;
  getMappedRange(): ArrayBuffer;
}
interface GpuCommandEncoder {
  copyBufferToBuffer(src: GpuBuffer, srcOffset: number, dst: GpuBuffer, dstOffset: number, size: number): void;
  finish(): unknown;
}
export interface GpuDevice {
  createBuffer(desc: { size: number; usage: number }): GpuBuffer;
  createCommandEncoder(): GpuCommandEncoder;
  queue: { submit(buffers: unknown[]): void };
}

// GPUBufferUsage and GPUMapMode flags (fixed by the WebGPU spec).
const MAP_READ = 0x1;
const COPY_SRC = 0x4;
const COPY_DST = 0x8;
const STORAGE = 0x80;
const READ = 0x1;

const BYTES: Record<string, number> = { float32: 4, float16: 2 };

type GpuTensorFactory = (
  buffer: GpuBuffer,
  options: { dataType: 'float32' | 'float16'; dims: readonly number[]; download: () => Promise<unknown>; dispose: () => void },
) => Tensor;

/**
 * Runs `plan` on the device; undefined when a copy would not be 4-byte aligned (float16
 * with an odd head_dim), which copyBufferToBuffer requires. `serially` is onnxruntime-web's
 * call chain: the copies, and later reads of the results, never overlap a session run.
 */
export async function copyOnGpu(
  device: GpuDevice,
  fromGpuBuffer: GpuTensorFactory,
  serially: <T>(fn: () => Promise<T>) => Promise<T>,
  plan: CopyPlan,
  sources: Tensor[][],
): Promise<Tensor[] | undefined> {
  const dataType = sources[0][0].type;
  const bytes = BYTES[dataType];
  if (!bytes || (dataType !== 'float32' && dataType !== 'float16')) return undefined;
  if (plan.ranges.some((r) => (r.from * bytes) % 4 || (r.to * bytes) % 4 || (r.count * bytes) % 4)) return undefined;
  if (sources.some((s) => s.some((t) => t.location !== 'gpu-buffer' || t.type !== dataType))) return undefined;
  // Sized as onnxruntime-web sizes its own (a multiple of 16 bytes); new buffers are zero-filled by WebGPU.
  const size = Math.max(16, Math.ceil((plan.size * bytes) / 16) * 16);
  return serially(async () => {
    const encoder = device.createCommandEncoder();
    const out = sources[0].map((_, t) => {
      const buffer = device.createBuffer({ size, usage: STORAGE | COPY_SRC | COPY_DST });
      for (const r of plan.ranges) {
        const src = sources[r.source][t].gpuBuffer as unknown as GpuBuffer;
        encoder.copyBufferToBuffer(src, r.from * bytes, buffer, r.to * bytes, r.count * bytes);
      }
      return fromGpuBuffer(buffer, {
        dataType,
        dims: plan.dims,
        download: () => serially(() => readBuffer(device, buffer, plan.size * bytes, dataType)),
        dispose: () => buffer.destroy(),
      });
    });
    device.queue.submit([encoder.finish()]);
    return out;
  });
}

/** A buffer's first `length` bytes on the CPU, typed as onnxruntime-web types its own downloads. */
async function readBuffer(device: GpuDevice, buffer: GpuBuffer, length: number, dataType: 'float32' | 'float16'): Promise<ArrayBufferView> {
  const staging = device.createBuffer({ size: buffer.size, usage: MAP_READ | COPY_DST });
  try {
    const encoder = device.createCommandEncoder();
    encoder.copyBufferToBuffer(buffer, 0, staging, 0, buffer.size);
    device.queue.submit([encoder.finish()]);
    await staging.mapAsync(READ);
    const copy = staging.getMappedRange().slice(0, length);
    if (dataType === 'float32') return new Float32Array(copy);
    const Half = (globalThis as { Float16Array?: new (b: ArrayBuffer) => ArrayBufferView }).Float16Array;
    return Half ? new Half(copy) : new Uint16Array(copy);
  } finally {
    staging.destroy();
  }
}
