// A Node front door's audio decoder (RouterOptions.decodeAudio): a worker thread of its own,
// started at the first upload and unref'd, that decodes and resamples files to mono 16 kHz.
// A file it cannot decode is left to the engine, whose decoders say why in the 400.
import { Worker } from 'node:worker_threads';
import { workerFile, workerScript } from '../../engine/worker-script.js';

/** What the worker is sent, and answers: mono 16 kHz samples, or why it could not decode. */
export interface AudioJob {
  id: number;
  bytes: Uint8Array;
}
export type AudioAnswer = { id: number; samples: Float32Array } | { id: number; error: string };

export function nodeAudioDecoder(): { decode(bytes: Uint8Array): Promise<Float32Array | undefined>; close(): Promise<void> } {
  let worker: Worker | undefined;
  let next = 0;
  const waiting = new Map<number, (samples: Float32Array | undefined) => void>();
  const start = () => {
    const script = workerScript(workerFile('audio', import.meta.url));
    const w = new Worker(script.entry, { eval: script.eval });
    w.unref();
    w.on('message', (a: AudioAnswer) => {
      waiting.get(a.id)?.('samples' in a ? a.samples : undefined);
      waiting.delete(a.id);
    });
    // A worker that dies answers nothing: its files go to the engine, and the next upload starts another.
    const fail = () => {
      for (const resolve of waiting.values()) resolve(undefined);
      waiting.clear();
      if (worker === w) worker = undefined;
    };
    w.on('error', fail);
    w.on('exit', fail);
    return w;
  };
  return {
    decode(bytes) {
      worker ??= start();
      const id = next++;
      const copy = bytes.slice();
      return new Promise((resolve) => {
        waiting.set(id, resolve);
        worker!.postMessage({ id, bytes: copy }, [copy.buffer as ArrayBuffer]);
      });
    },
    async close() {
      await worker?.terminate();
      worker = undefined;
    },
  };
}
