// hearth/msw's handlers route /v1/audio/transcriptions and /v1/audio/translations to the router
// in-process, the SDK's multipart body parsed there, with a stub engine behind the router (the
// real engine's speech is tested on its own). An unmodified openai SDK whose fetch is answered by
// the handlers through msw's getResponse (as the page answers its own fetch, page-fetch.ts), and,
// where msw's Node interceptor runs (it needs Promise.withResolvers: Node 22), through setupServer.
import { getResponse } from 'msw';
import { setupServer } from 'msw/node';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handlersFor } from '../../src/front/msw/handlers.js';
import { setupAudio, wav, WHISPER } from '../api/audio-harness.js';
import { GOOD_KEY } from '../api/stub-access.js';

const baseURL = 'https://api.example.test/v1';
const TEXT = 'Hello world. How --> are you?';
const file = () => toFile(wav(1), 'a.wav', { type: 'audio/wav' });

function routed() {
  const s = setupAudio();
  const handlers = handlersFor(s.runtime, baseURL);
  const sdk = new OpenAI({
    apiKey: GOOD_KEY,
    baseURL,
    maxRetries: 0,
    fetch: async (url: string | URL | Request, init?: RequestInit) => {
      const res = await getResponse(handlers, new Request(url, init));
      if (!res) throw new Error(`no handler answered ${String(url)}`);
      return res;
    },
  });
  return { s, handlers, sdk };
}

describe('hearth/msw routes the audio routes to the router with a stub engine', () => {
  it('transcribes in json and srt, and translates, from the SDK\'s multipart body', async () => {
    const { s, sdk } = routed();
    expect(await sdk.audio.transcriptions.create({ file: await file(), model: WHISPER })).toEqual({ text: TEXT, usage: { type: 'duration', seconds: 5 } });
    expect(await sdk.audio.transcriptions.create({ file: await file(), model: WHISPER, response_format: 'srt' })).toMatch(/^1\n00:00:00,000 --> /);
    expect(await sdk.audio.translations.create({ file: await file(), model: WHISPER })).toEqual({ text: TEXT });
    expect(s.engine.transcribeCalls.map((r) => r.task)).toEqual(['transcribe', 'transcribe', 'translate']);
    expect(s.engine.transcribeCalls[0]!.audio).toEqual(wav(1));
  });

  it('streams the transcript events', async () => {
    const { sdk } = routed();
    const stream = await sdk.audio.transcriptions.create({ file: await file(), model: WHISPER, stream: true });
    const types: string[] = [];
    for await (const ev of stream) types.push(ev.type);
    expect(types).toEqual([...Array(6).fill('transcript.text.delta'), 'transcript.text.done']);
  });

  describe.runIf(typeof (Promise as { withResolvers?: unknown }).withResolvers === 'function')('through setupServer', () => {
    const { s, handlers } = routed();
    const server = setupServer(...handlers);
    beforeAll(() => server.listen());
    afterAll(() => server.close());

    it('answers the SDK\'s own fetch', async () => {
      const sdk = new OpenAI({ apiKey: GOOD_KEY, baseURL, maxRetries: 0 });
      expect(await sdk.audio.transcriptions.create({ file: await file(), model: WHISPER, response_format: 'text' })).toBe(TEXT);
      expect(s.engine.transcribeCalls).toHaveLength(1);
    });
  });
});
