// The audio decoding worker of a Node front door (src/front/node/audio-decoder.ts): uploads are
// decoded and resampled here, so that a long file's WASM decoding and resampling (seconds for
// minutes of 44.1 kHz audio) blocks neither the HTTP server nor the engine's step loop.
import { parentPort } from 'node:worker_threads';
import { decodeAudio } from '../src/engine/speech/decode-audio.js';
import type { AudioAnswer, AudioJob } from '../src/front/node/audio-decoder.js';

// One at a time: each decode is synchronous WASM work anyway.
let queue = Promise.resolve();
parentPort!.on('message', (job: AudioJob) => {
  queue = queue.then(async () => {
    try {
      const { samples } = await decodeAudio(job.bytes);
      parentPort!.postMessage({ id: job.id, samples } satisfies AudioAnswer, [samples.buffer as ArrayBuffer]);
    } catch (e) {
      parentPort!.postMessage({ id: job.id, error: e instanceof Error ? e.message : String(e) } satisfies AudioAnswer);
    }
  });
});
