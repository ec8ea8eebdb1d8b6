// Runs in the demo page (imported through Vite by the browser tests): an unmodified openai SDK
// posts a File to /v1/audio/transcriptions and /v1/audio/translations, answered in the tab by
// the Whisper fixture on onnxruntime-web. Returns what the test holds against Node's reference.
import OpenAI from 'openai';
import { wavBytes } from '../helpers/wav.js';
import type { Info } from './page-client.js';

export async function transcriptionFlow(info: Info, model: string, samples: number[], m4a: number[]) {
  const sdk = new OpenAI({ baseURL: `${location.origin}/v1`, apiKey: info.apiKey, dangerouslyAllowBrowser: true, maxRetries: 0 });
  const file = () => new File([wavBytes(Float32Array.from(samples), 16_000, { format: 'float32' }) as BlobPart], 'clip.wav', { type: 'audio/wav' });
  const json = await sdk.audio.transcriptions.create({ file: file(), model, language: 'en' });
  const verbose = await sdk.audio.transcriptions.create({ file: file(), model, language: 'en', response_format: 'verbose_json', timestamp_granularities: ['segment'] });
  const srt = (await sdk.audio.transcriptions.create({ file: file(), model, language: 'en', response_format: 'srt' })) as unknown as string;
  let streamed = '';
  for await (const ev of await sdk.audio.transcriptions.create({ file: file(), model, language: 'en', stream: true })) {
    if (ev.type === 'transcript.text.delta') streamed += ev.delta;
  }
  const refused = await sdk.audio.transcriptions.create({ file: new File([new Uint8Array(64)], 'noise.bin'), model, language: 'en' }).then(
    () => null,
    (e: { status?: number; error?: { param?: string } }) => ({ status: e.status, param: e.error?.param }),
  );
  // An iPhone's voice memo is m4a: the page's Web Audio decodes it (the worker has no AAC decoder).
  const memo = await sdk.audio.transcriptions.create({ file: new File([Uint8Array.from(m4a)], 'memo.m4a', { type: 'audio/mp4' }), model, language: 'en' });
  return { json, verbose, srt, streamed, refused, memo };
}
