import { access, readFile } from 'node:fs/promises';
import * as ort from 'onnxruntime-node';
import { EngineError } from '../engine/errors.js';
import type { Device } from '../engine/protocol.js';
import type { Backend } from './types.js';

/** onnxruntime-node: CPU always; CUDA when its provider library was installed. */
export function nodeBackend(device: Device = 'cpu'): Backend {
  if (device !== 'cpu' && device !== 'cuda') {
    throw new EngineError('invalid_value', `device "${device}" is not available in Node; use cpu or cuda`, 'device');
  }
  return {
    device,
    Tensor: ort.Tensor,
    async createSession(model) {
      const options: ort.InferenceSession.SessionOptions = {
        executionProviders: [device],
        graphOptimizationLevel: 'all',
      };
      try {
        return typeof model === 'string'
          ? await ort.InferenceSession.create(model, options)
          : await ort.InferenceSession.create(model, options);
      } catch (e) {
        if (device === 'cuda') throw cudaMissing(e);
        throw e;
      }
    },
    readText: (path) => readFile(path, 'utf8'),
    exists: (path) =>
      access(path).then(
        () => true,
        () => false,
      ),
  };
}

function cudaMissing(cause: unknown): Error {
  const why = cause instanceof Error ? cause.message : String(cause);
  return new Error(
    `The CUDA execution provider could not start (${why}). Install it with ` +
      '`ONNXRUNTIME_NODE_INSTALL=cuda12 npm rebuild onnxruntime-node` (needs CUDA 12 and cuDNN 9), or use --device cpu.',
  );
}
