import type { InferenceSession, Tensor } from 'onnxruntime-common';
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
  /**
   * Whether `run(feeds, fetches)` writes outputs into the tensors given in `fetches`
   * (onnxruntime-node on the CPU), so decode steps can reuse their KV buffers.
   */
  readonly preallocatesOutputs?: boolean;
  /** Reads a file of a local model folder: config.json, generation_config.json. */
  readText(path: string): Promise<string>;
  exists(path: string): Promise<boolean>;
  /** A file's size in bytes without reading it (undefined when unknown), for the fit check. */
  fileSize?(path: string): Promise<number | undefined>;
  /** What the device offers (free memory, storage quota, largest buffer), checked before a load. */
  budget?(): Promise<DeviceBudget>;
}

export type { InferenceSession, Tensor };
