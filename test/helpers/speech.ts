// transformers.js's automatic-speech-recognition pipeline on the tiny-whisper fixture: the
// reference text for the front doors' tests. max_new_tokens turns its seek loop off (Hearth
// decodes each window once).
import { env, pipeline } from '@huggingface/transformers';
import { fixtures } from './fixtures.js';

export const WHISPER_FIXTURE = 'tiny-whisper';

export interface ReferenceTranscript {
  text: string;
  chunks?: { text: string; timestamp: [number, number | null] }[];
}

export async function referenceTranscript(samples: Float32Array, opts: { language?: string; task?: 'transcribe' | 'translate'; timestamps?: boolean } = {}): Promise<ReferenceTranscript> {
  env.localModelPath = `${await fixtures()}/`;
  env.allowRemoteModels = false;
  const asr = await pipeline('automatic-speech-recognition', WHISPER_FIXTURE, { device: 'cpu', dtype: 'fp32', local_files_only: true });
  try {
    const out = (await asr(samples, { language: opts.language ?? 'en', task: opts.task ?? 'transcribe', return_timestamps: opts.timestamps ?? false, max_new_tokens: 440 })) as ReferenceTranscript;
    return { ...out, text: out.text.trim() };
  } finally {
    await asr.dispose();
  }
}
