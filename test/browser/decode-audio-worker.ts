// A module Web Worker (served by Vite to the browser test decode-audio-in-a-worker): it decodes
// the fixture files it is sent with decodeAudio, the page thread's only part being the
// message, and answers with what came out, or with the error's name, code and param.
import { decodeAudio } from '../../src/engine/speech/decode-audio.js';

export interface WorkerAnswer {
  file: string;
  duration?: number;
  length?: number;
  rms?: number;
  error?: { name: string; code?: string; param?: string | null; message: string };
}

self.onmessage = async (event: MessageEvent<{ files: string[] }>) => {
  const answers: WorkerAnswer[] = [];
  for (const file of event.data.files) {
    try {
      const bytes = file === 'garbage' ? new TextEncoder().encode('not audio at all') : new Uint8Array(await (await fetch(`/test/fixtures/audio/${file}`)).arrayBuffer());
      const audio = await decodeAudio(bytes);
      let sum = 0;
      for (const s of audio.samples) sum += s * s;
      answers.push({ file, duration: audio.duration, length: audio.samples.length, rms: Math.sqrt(sum / audio.samples.length) });
    } catch (e) {
      const err = e as { name: string; code?: string; param?: string | null; message: string };
      answers.push({ file, error: { name: err.name, code: err.code, param: err.param, message: err.message } });
    }
  }
  self.postMessage(answers);
};
