import { existsSync, readdirSync } from 'node:fs';
import { access, open, readFile, stat } from 'node:fs/promises';
import { freemem } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { EngineError } from '../engine/errors.js';
import { checkFusedAttention, type OpenCheckSession } from './fused-attention-check.js';
import { feedHalvesAsUint16 } from './node-float16.js';
import { GraphKvCopier, type CopyTarget } from './node-kv-copy.js';
import { loadXGrammarInNode } from './node-xgrammar.js';
import { decodeImageNode } from './node-image.js';
import type { Device } from '../engine/protocol.js';
import type { KvArray } from './kv.js';
import type { Backend, InferenceSession } from './types.js';
import { collectGarbage } from './node-reclaim.js';

export const CUDA_INSTALL_HINT =
  'Install it with `ONNXRUNTIME_NODE_INSTALL=cuda12 npm rebuild onnxruntime-node` (needs CUDA 12 and cuDNN 9), or use --device cpu.';

/**
 * onnxruntime-node: CPU always (and its bundled WebGPU); CUDA when its provider library was installed.
 * `threads`: onnxruntime's intra-op threads for each run (default: its own, one per core).
 * `kvOnDevice: false`: on WebGPU, the KV cache goes through the host at every step (for measuring what keeping it there saves).
 */
export function nodeBackend(device: Device = 'cpu', opts: { threads?: number; kvOnDevice?: boolean } = {}): Backend {
  if (device === 'wasm') {
    throw new EngineError('invalid_value', 'device "wasm" is for browsers; in Node use cpu, cuda or webgpu', 'device');
  }
  // On WebGPU the KV cache stays in GPU buffers (CUDA's binding has no device outputs).
  const resident = device === 'webgpu' && opts.kvOnDevice !== false;
  const onDevice = (outputs: string[]) =>
    resident && outputs.length ? { preferredOutputLocation: Object.fromEntries(outputs.map((n) => [n, 'gpu-buffer' as const])) } : {};
  const copier =
    resident
      ? new GraphKvCopier(ort.Tensor, async (graph: Uint8Array, outputs: string[], target: CopyTarget) =>
          feedHalvesAsUint16(await ort.InferenceSession.create(graph, { executionProviders: ['webgpu'], ...onDevice(target === 'gpu-buffer' ? outputs : []) })) as unknown as InferenceSession,
        )
      : undefined;
  return {
    device,
    ...(device === 'webgpu' ? { fusedAttentionWorkarounds: once(() => checkFusedAttention(openCheck, ort.Tensor)) } : {}),
    Tensor: ort.Tensor,
    loadXGrammar: loadXGrammarInNode,
    reclaim: collectGarbage,
    async createSession(model, externalData = [], deviceOutputs = []) {
      const options: ort.InferenceSession.SessionOptions = {
        executionProviders: [device],
        graphOptimizationLevel: 'all',
        // onnxruntime's CPU arena keeps the most any run of the session took (an embedding batch
        // of 16 rows of 512 tokens, a long prefill) until the session is released; without it a
        // run's memory goes back to malloc when the run ends. npm run bench:memory (issue 31):
        // 10 s after 666 embedding inputs of 431 tokens, idle + 436 MiB with the arena, + 197
        // without; after four chats of 1,486 prompt tokens next, + 444 and + 136.
        enableCpuMemArena: false,
        ...(opts.threads ? { intraOpNumThreads: opts.threads } : {}),
        // Spinning pool threads fight the main thread (HTTP, SSE) for the cores;
        // waiting threads that sleep leave it room. A graph given as bytes (edited at load)
        // names its external data relative to a folder it no longer knows: that folder.
        extra: {
          session: {
            intra_op: { allow_spinning: '0' },
            ...(typeof model !== 'string' && externalData.length ? { model_external_initializers_file_folder_path: dirname(externalData[0]!) } : {}),
          },
        },
        ...onDevice(deviceOutputs),
      };
      try {
        return feedHalvesAsUint16(
          typeof model === 'string' ? await ort.InferenceSession.create(model, options) : await ort.InferenceSession.create(model, options),
        );
      } catch (e) {
        if (device === 'cuda') throw cudaMissing(e);
        throw e;
      }
    },
    // Repacks and prefix-cache reads as copy graphs on the same provider (node-kv-copy.ts).
    ...(copier
      ? {
          copyOnDevice: (plan, sources) => copier.run(plan, sources, 'gpu-buffer'),
          copyToHost: async (plan, sources) => (await copier.run(plan, sources, 'cpu')).map((t) => t.data as KvArray),
        }
      : {}),
    readText: (path) => readFile(path, 'utf8'),
    decodeImage: decodeImageNode,
    readBytes: async (path) => {
      const b = await readFile(path);
      return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
    },
    async readRange(path, offset, length) {
      const file = await open(path, 'r');
      try {
        const buf = new Uint8Array(length);
        const { bytesRead } = await file.read(buf, 0, length, offset);
        return buf.subarray(0, bytesRead);
      } finally {
        await file.close();
      }
    },
    fileSize: (path) => stat(path).then((s) => s.size, () => undefined),
    // The CPU provider holds weights and KV in this process's memory.
    budget: async () => ({ memory: { bytes: freemem(), what: 'free memory' } }),
    exists: (path) =>
      access(path).then(
        () => true,
        () => false,
      ),
  };
}

/** The fused-attention self-check's graph on the WebGPU provider, against the CPU's. */
const openCheck: OpenCheckSession = async (graph, on) =>
  (await ort.InferenceSession.create(graph, { executionProviders: [on === 'device' ? 'webgpu' : 'cpu'], logSeverityLevel: 3 })) as unknown as InferenceSession;

/** `fn`'s promise, made on the first call and kept. */
function once<T>(fn: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () => (p ??= fn());
}

function cudaMissing(cause: unknown): Error {
  const why = cause instanceof Error ? cause.message : String(cause);
  return new Error(`The CUDA execution provider could not start (${why}). ${CUDA_INSTALL_HINT}`);
}

/** The npm package ships only the CPU library; the CUDA provider arrives with the rebuild above. */
export function cudaProviderInstalled(): boolean {
  const pkg = dirname(createRequire(import.meta.url).resolve('onnxruntime-node/package.json'));
  const bin = join(pkg, 'bin');
  if (!existsSync(bin)) return false;
  const libs = readdirSync(bin, { recursive: true, encoding: 'utf8' });
  return libs.some((f) => /onnxruntime_providers_cuda\.(so|dll)$/.test(f));
}
