// onnxruntime-web: WebGPU when the browser gives an adapter, else WASM (threaded
// when the page is cross-origin isolated). Model files come through the Cache API
// (web-cache.ts). Runs in a Web Worker; the WASM/JS runtime files come from the app
// itself (`wasmPaths`), never from a CDN.
import * as ort from 'onnxruntime-web';
import type { Device } from '../engine/protocol.js';
import { checkFusedAttention } from './fused-attention-check.js';
import type { Backend, DeviceBudget, InferenceSession } from './types.js';
import { fetchModelFile, modelFileExists, modelFileSize, readModelRange, type FileProgress } from './web-cache.js';
import { copyOnGpu, type GpuDevice } from './web-kv-copy.js';
import { decodeImageWeb } from './web-image.js';

export type WebDevice = Extract<Device, 'webgpu' | 'wasm'>;

export interface WebBackendOptions {
  device: WebDevice;
  /** URL prefix (ending in /) where onnxruntime-web's dist files (.wasm, .mjs) are served. */
  wasmPaths: string;
  /** WASM threads; default: up to 4 when cross-origin isolated, else 1. */
  numThreads?: number;
  onProgress?: (p: FileProgress) => void;
  /** Milliseconds between network chunks of model files (tests slow a load down with it). */
  throttleMs?: number;
}

/** Which device this context can use: WebGPU if an adapter is granted, else WASM. */
export async function detectWebDevice(): Promise<WebDevice> {
  const gpu = (globalThis.navigator as Navigator & { gpu?: { requestAdapter(): Promise<unknown> } } | undefined)?.gpu;
  if (!gpu) return 'wasm';
  try {
    return (await gpu.requestAdapter()) ? 'webgpu' : 'wasm';
  } catch {
    return 'wasm';
  }
}

export function defaultThreads(): number {
  const isolated = (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated === true;
  if (!isolated) return 1;
  const cores = globalThis.navigator?.hardwareConcurrency ?? 1;
  return Math.max(1, Math.min(4, cores));
}

let chain: Promise<unknown> = Promise.resolve();

/** One onnxruntime-web call at a time, in order of arrival. */
function serially<T>(fn: () => Promise<T>): Promise<T> {
  const next = chain.then(fn, fn);
  chain = next.catch(() => undefined);
  return next;
}

/**
 * onnxruntime-web runs one session at a time (its WebGPU device and WASM heap are shared):
 * overlapping run() calls of two sessions (chat and embeddings, a model and its sampling
 * head, a load's self-check beside another model) hang or fail ("Session already started").
 */
function runsSerially(session: ort.InferenceSession): InferenceSession {
  const run = session.run.bind(session) as (...a: unknown[]) => Promise<ort.InferenceSession.ReturnType>;
  (session as { run: unknown }).run = (...args: unknown[]) => serially(() => run(...args));
  return session as unknown as InferenceSession;
}

export function webBackend(opts: WebBackendOptions): Backend {
  const { device } = opts;
  ort.env.wasm.wasmPaths = opts.wasmPaths;
  ort.env.wasm.numThreads = opts.numThreads ?? defaultThreads();
  ort.env.wasm.proxy = false; // already in a worker
  ort.env.logLevel = 'error';
  let checked: ReturnType<NonNullable<Backend['fusedAttentionWorkarounds']>> | undefined;
  const load = (path: string) => fetchModelFile(path, { onProgress: opts.onProgress, throttleMs: opts.throttleMs });
  return {
    device,
    ...(device === 'webgpu'
      ? {
          // Against WASM in the same page, once.
          fusedAttentionWorkarounds: () =>
            (checked ??= checkFusedAttention(
              async (graph, on) => runsSerially(await serially(() => ort.InferenceSession.create(graph, { executionProviders: [on === 'device' ? 'webgpu' : 'wasm'], logSeverityLevel: 3 }))),
              ort.Tensor as unknown as Backend['Tensor'],
            )),
        }
      : {}),
    Tensor: ort.Tensor as unknown as Backend['Tensor'],
    async createSession(model, externalData = [], deviceOutputs = []) {
      const bytes = typeof model === 'string' ? await load(model) : model;
      // The graph names each data file relative to its own folder ("model.onnx_data").
      const data = await Promise.all(externalData.map(async (path) => ({ path: path.split('/').pop()!, data: await load(path) })));
      const session = await serially(() =>
        ort.InferenceSession.create(bytes, {
          executionProviders: [device],
          graphOptimizationLevel: 'all',
          // As in Node (backends/node.ts): without the CPU arena, what a run took goes back to
          // the WASM heap's malloc when it ends, for the page's other sessions to use, rather than
          // staying with this session (WASM memory itself never shrinks).
          enableCpuMemArena: false,
          logSeverityLevel: 3,
          ...(data.length ? { externalData: data } : {}),
          // The KV cache stays in GPU buffers between steps instead of a round trip through the CPU.
          ...(device === 'webgpu' && deviceOutputs.length
            ? { preferredOutputLocation: Object.fromEntries(deviceOutputs.map((n) => [n, 'gpu-buffer' as const])) }
            : {}),
        }),
      );
      if (device === 'webgpu') await refuseHalvesWithoutF16(session);
      return runsSerially(session);
    },
    // KV repacks on the GPU the sessions run on (there once a WebGPU session exists).
    ...(device === 'webgpu'
      ? {
          async copyOnDevice(plan, sources) {
            const gpu = (await ort.env.webgpu.device) as unknown as GpuDevice | undefined;
            if (!gpu) return undefined;
            const fromGpuBuffer = ort.Tensor.fromGpuBuffer as unknown as Parameters<typeof copyOnGpu>[1];
            return copyOnGpu(gpu, fromGpuBuffer, serially, plan, sources);
          },
        }
      : {}),
    fileSize: (path) => modelFileSize(path),
    readRange: (path, offset, length) => readModelRange(path, offset, length),
    budget: () => webBudget(device),
    async readText(path) {
      return new TextDecoder().decode(await load(path));
    },
    readBytes: (path) => load(path),
    decodeImage: decodeImageWeb,
    /** A folder exists when its config.json does. (Folder names may hold dots: Qwen2.5-0.5B-Instruct.) */
    async exists(path) {
      const last = path.replace(/\/+$/, '').split('/').pop() ?? '';
      const probe = /\.(json|jinja|onnx|onnx_data|data|txt|model|bin)$/.test(last) ? path : `${path.replace(/\/+$/, '')}/config.json`;
      return modelFileExists(probe);
    },
  };
}

/**
 * A graph that computes in float16 needs the adapter's shader-f16 feature: without it,
 * onnxruntime-web 1.30 loads the graph and its runs give garbage (token 0 at every step,
 * seen on SwiftShader) with no error. Refused at load instead, with what to pick.
 */
async function refuseHalvesWithoutF16(session: ort.InferenceSession): Promise<void> {
  const metas = [...session.inputMetadata, ...session.outputMetadata] as { type?: string }[];
  if (!metas.some((m) => m.type === 'float16')) return;
  const gpu = (await ort.env.webgpu.device) as unknown as { features?: { has(name: string): boolean } } | undefined;
  if (!gpu?.features || gpu.features.has('shader-f16')) return;
  await session.release();
  throw new Error(
    "this model computes in float16, and this GPU's WebGPU adapter lacks shader-f16: pick a float32 form of it for webgpu (fp32, q4) or run it on wasm",
  );
}

/** onnxruntime-web's WebAssembly heap is 32-bit: weights and KV share at most 4 GiB. */
const WASM_MEMORY = 4 * 2 ** 30;

/** The storage quota, and on WebGPU the adapter's largest storage buffer; on WASM the 4 GiB heap. */
async function webBudget(device: WebDevice): Promise<DeviceBudget> {
  const budget: DeviceBudget = {};
  const quota = await globalThis.navigator?.storage?.estimate?.().catch(() => undefined);
  if (quota?.quota) budget.storage = { bytes: quota.quota, what: 'storage quota' };
  if (device === 'wasm') budget.memory = { bytes: WASM_MEMORY, what: 'WebAssembly memory limit' };
  else {
    const gpu = (globalThis.navigator as Navigator & { gpu?: { requestAdapter(): Promise<{ limits: { maxStorageBufferBindingSize: number } } | null> } }).gpu;
    const adapter = await gpu?.requestAdapter().catch(() => null);
    if (adapter) budget.maxBuffer = adapter.limits.maxStorageBufferBindingSize;
  }
  return budget;
}

// (device loss) ---------------------------------------------------------------
/** The part of a GPUDevice the engine watches. */
export interface LosableDevice {
  lost: Promise<{ reason: string; message: string }>;
  destroy(): void;
}

/** The WebGPU device onnxruntime-web runs on, once its first WebGPU session has made one. */
export async function webgpuDevice(): Promise<LosableDevice | undefined> {
  return (await ort.env.webgpu.device) as unknown as LosableDevice | undefined;
}
