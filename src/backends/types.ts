import type { InferenceSession, Tensor } from 'onnxruntime-common';
import type * as XGrammarModule from '@mlc-ai/web-xgrammar';
import type { Device } from '../engine/protocol.js';
import type { CopyPlan, KvArray } from './kv.js';
import type { ImageDecoder } from './image.js';

/** What a device offers a model, checked before it loads (engine/models/fit.ts). */
export interface DeviceBudget {
  /** Memory the weights and the KV cache must fit in, and what it is ("free memory", "storage quota"). */
  memory?: { bytes: number; what: string };
  /** Storage the weight files must fit in (the browser's quota for the Cache API). */
  storage?: { bytes: number; what: string };
  /** The largest single buffer (WebGPU's maxStorageBufferBindingSize): one layer's KV for a full context must fit. */
  maxBuffer?: number;
}

/** The workarounds a device needs for fused attention (fused-attention-check.ts), and a line for each applied. */
export interface FusedAttentionWorkarounds {
  /** Most new tokens a run may take (prompts prefill in chunks of it). */
  maxNewTokens?: number;
  /** Rows of different lengths give wrong results together: one row a run. */
  oneRowPerRun?: boolean;
  /** What was applied and why, for /status and the load log. */
  applied: string[];
}

/**
 * What the engine needs from an onnxruntime flavour. onnxruntime-node and
 * onnxruntime-web share one API (onnxruntime-common), so the engine codes against
 * that and each runtime supplies its module and device choice here.
 */
export interface Backend {
  readonly device: Device;
  /** Returns what a released model left in the JS heap (a full collection, after an unload); absent: left to the runtime. */
  reclaim?(): void;
  /**
   * Where the device may run GroupQueryAttention (fused exports' attention) otherwise than the
   * CPU: a self-check on the adapter (fused-attention-check.ts), run once, that says which
   * workarounds a fused graph needs here. Absent: none (the CPU, WASM, CUDA).
   */
  fusedAttentionWorkarounds?(): Promise<FusedAttentionWorkarounds>;
  /**
   * `model` is a file path or the model's bytes. `externalData`: paths of the weight files
   * beside it (`model.onnx_data`, `model.onnx_data_1`, …), which onnxruntime-node reads
   * itself from the paths the graph records (relative to the model's folder, which it is
   * told where `model` is bytes), and the browser hands to onnxruntime-web's
   * `externalData` option. `deviceOutputs`: outputs to leave on
   * the device where the backend can (WebGPU: GPU buffers), to be fed back as inputs.
   */
  createSession(model: string | Uint8Array, externalData?: string[], deviceOutputs?: string[]): Promise<InferenceSession>;
  readonly Tensor: typeof Tensor;
  /** Reads a file of a local model folder: config.json, generation_config.json. */
  readText(path: string): Promise<string>;
  /** A whole file's bytes (an ONNX graph to edit before its session is made: createModelSession's `edit`). */
  readBytes?(path: string): Promise<Uint8Array>;
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
  /** Decodes an image's bytes to pixels (vision-language models): sharp in Node, createImageBitmap in a page. */
  decodeImage?: ImageDecoder;
  /** Loads XGrammar's WASM build where the default dynamic import cannot (Node's ESM loader). */
  loadXGrammar?(): Promise<typeof XGrammarModule>;
  /**
   * Runs a KV copy plan on the device: `sources[s][t]` are device tensors (outputs left on
   * the device, or earlier results of this), or host tensors beside them (a prefix-cache hit
   * prefilled with another prompt's chunk), and the result is new device tensors of the
   * plan's dims, zero where no range writes, never read back to the CPU. The sources stay
   * valid (the caller disposes them; commands already submitted keep their buffers alive).
   * Undefined where it cannot (a range not aligned as the device needs, a host source): the
   * caller then copies on the host. Absent where outputs never stay on a device.
   */
  copyOnDevice?(plan: CopyPlan, sources: Tensor[][]): Promise<Tensor[] | undefined>;
  /**
   * Runs a KV copy plan on the device and brings only its result to the host: the one read
   * of a sequence the prefix cache stores. Present where a device tensor cannot be read back
   * with getData (onnxruntime-node aborts the process on it); elsewhere the caller reads the
   * result of copyOnDevice.
   */
  copyToHost?(plan: CopyPlan, sources: Tensor[][]): Promise<KvArray[]>;
}

export type { InferenceSession, Tensor };
