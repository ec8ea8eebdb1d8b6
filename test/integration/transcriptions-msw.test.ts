// hearth/msw in an app's test suite: the openai SDK's transcription (a File in a multipart body)
// answered in process by the default catalog's tiny-whisper, with transformers.js's text for the
// same samples; segments in verbose_json and a stream too.
import OpenAI, { toFile } from 'openai';
import { beforeAll, describe, expect, it } from 'vitest';
import { useHearthMsw } from '../helpers/msw.js';
import { chirp } from '../helpers/signals.js';
import { referenceTranscript, type ReferenceTranscript } from '../helpers/speech.js';
import { wavBytes } from '../helpers/wav.js';

const BASE_URL = 'https://speech.hearth.test/v1';
const MODEL = 'svc/tiny-whisper';
const samples = chirp(3, 200, 3000);
const file = () => toFile(wavBytes(samples, 16_000, { format: 'float32' }), 'clip.wav', { type: 'audio/wav' });

useHearthMsw(BASE_URL);

let plain: ReferenceTranscript;
let timed: ReferenceTranscript;
beforeAll(async () => {
  [plain, timed] = [await referenceTranscript(samples), await referenceTranscript(samples, { timestamps: true })];
}, 120_000);

describe('hearth/msw transcribes in process', () => {
  it("answers the openai SDK's file with transformers.js's text, segments and a stream", async () => {
    // Made after msw's setup: the SDK takes the fetch it patched.
    const client = new OpenAI({ baseURL: BASE_URL, apiKey: 'svc_live_' + 's'.repeat(32), maxRetries: 0 });
    const json = await client.audio.transcriptions.create({ file: await file(), model: MODEL, language: 'en' });
    expect(json.text).toBe(plain.text);
    const verbose = await client.audio.transcriptions.create({ file: await file(), model: MODEL, language: 'en', response_format: 'verbose_json', timestamp_granularities: ['segment'] });
    expect(verbose.segments!.map((s) => s.text.trim())).toEqual(timed.chunks!.map((c) => c.text.trim()));
    let streamed = '';
    for await (const ev of await client.audio.transcriptions.create({ file: await file(), model: MODEL, language: 'en', stream: true })) {
      if (ev.type === 'transcript.text.delta') streamed += ev.delta;
    }
    expect(streamed).toBe(plain.text);
  });
});
