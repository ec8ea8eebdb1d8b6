import type { InferenceSession, Tensor } from 'onnxruntime-common';
import type { CopyPlan } from '../engine/kv/copy-plan.js';
import type { DeviceBudget } from '../engine/models/fit.js';
import type { Device } from '../engine/protocol.js';

/**
 * What the engine needs from an onnxruntime flavour. onnxruntime-node and
 * onnxruntime-web share one API (onnxruntime-common), so the engine codes against
 * that and each runtime supplies its module and device choice here.
 */
export interface Backend {
  readonly device: Device;
  /**
   * `model` is a file path (Node) or the model's bytes (browser). `externalData`: paths of
   * the weight files beside it (`model.onnx_data`, `model.onnx_data_1`, …), which
   * onnxruntime-node reads itself from the paths the graph records, and the browser
   * hands to onnxruntime-web's `externalData` option. `deviceOutputs`: outputs to leave on
   * the device where the backend can (WebGPU: GPU buffers), to be fed back as inputs.
   */
  createSession(model: string | Uint8Array, externalData?: string[], deviceOutputs?: string[]): Promise<InferenceSession>;
  readonly Tensor: typeof Tensor;
  /** Reads a file of a local model folder: config.json, generation_config.json. */
  readText(path: string): Promise<string>;
  exists(path: string): Promise<boolean>;
  /**
   * `length` bytes of a file from `offset` (fewer at its end), to read an ONNX graph's op types
   * without loading its weights (graph-ops.ts).
   */
  readRange?(path: string, offset: number, length: number): Promise<Uint8Array>;
  /** A file's size in bytes without reading it (undefined when unknown), for the fit check. */
  fileSize?(path: string): Promise<number | undefined>;
  /** What the device offers (free memory, storage quota, largest buffer), checked before a load. */
  budget?(): Promise<DeviceBudget>;
  /**
   * Runs a KV copy plan on the device: `sources[s][t]` are device tensors (outputs left on
   * the device, or earlier results of this), and the result is new device tensors of the
   * plan's dims, zero where no range writes, never read back to the CPU. The sources stay
   * valid (the caller disposes them; commands already submitted keep their buffers alive).
   * Undefined where it cannot (a range not aligned as the device needs): the caller then
   * copies on the host. Absent where outputs never stay on a device.
   */
  copyOnDevice?(plan: CopyPlan, sources: Tensor[][]): Promise<Tensor[] | undefined>;
}

export type { InferenceSession, Tensor };
