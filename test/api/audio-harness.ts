// The router over the stub engine with a transcription model beside the others
// (svc/tiny-whisper, priced as whisper-1: 0.0001 USD a second of audio), and the
// multipart bodies the audio routes take.
import type { RouterOptions } from '../../src/types.js';
import { setup } from './harness.js';
import { AUTH } from './stub-access.js';
import { stubCatalog } from './stub-engine.js';

export const WHISPER = 'svc/tiny-whisper';
export const PER_SECOND = 0.0001;

/** A 16 kHz mono 16-bit WAV of `seconds` of silence (what the stub engine is sent; it decodes nothing). */
export function wav(seconds = 1, rate = 16_000): Uint8Array {
  const data = Math.round(seconds * rate) * 2;
  const b = new Uint8Array(44 + data);
  const v = new DataView(b.buffer);
  const text = (at: number, s: string) => [...s].forEach((ch, i) => (b[at + i] = ch.charCodeAt(0)));
  text(0, 'RIFF');
  v.setUint32(4, 36 + data, true);
  text(8, 'WAVE');
  text(12, 'fmt ');
  v.setUint32(16, 16, true);
  v.setUint16(20, 1, true); // PCM
  v.setUint16(22, 1, true); // mono
  v.setUint32(24, rate, true);
  v.setUint32(28, rate * 2, true);
  v.setUint16(32, 2, true);
  v.setUint16(34, 16, true);
  text(36, 'data');
  v.setUint32(40, data, true);
  return b;
}

export function setupAudio(options: RouterOptions = {}) {
  const s = setup(options);
  s.engine.modelStates.push({
    id: WHISPER,
    task: 'transcription',
    class: '39M',
    context_length: 448,
    status: 'ready',
    created: 1_700_000_000,
    owned_by: 'hearth',
    input_modalities: ['audio'],
  });
  s.runtime.catalog = () => [
    ...stubCatalog(),
    { id: WHISPER, task: 'transcription', class: '39M', context_length: 448, source: 'fixtures/tiny-whisper', price: { input_per_1m: 0, output_per_1m: 0, per_audio_second: PER_SECOND } },
  ];
  // The router reads the runtime's models and catalog as it serves: the app setup() made serves these too.
  const { fetch } = s;
  /** POSTs a form (fields as strings; `file` a Blob) with the key. */
  const postForm = (path: string, fields: Record<string, string | Blob | string[]>, init: RequestInit = {}) => {
    const form = new FormData();
    for (const [k, v] of Object.entries(fields)) {
      if (Array.isArray(v)) v.forEach((x) => form.append(k, x));
      else if (v instanceof Blob) form.append(k, v, 'audio.wav');
      else form.append(k, v);
    }
    return fetch(path, { method: 'POST', headers: { ...AUTH }, body: form, ...init });
  };
  return { ...s, postForm };
}

/** A form's usual fields: a second of WAV for the whisper model. */
export const audioFields = (extra: Record<string, string | Blob | string[]> = {}) => ({
  file: new Blob([wav(1) as Uint8Array<ArrayBuffer>], { type: 'audio/wav' }),
  model: WHISPER,
  ...extra,
});
