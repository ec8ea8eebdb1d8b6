// A front Hearth whose transcription model is another Hearth's (a real server process with its
// own keys) through a catalog `upstream` entry: the openai SDK's multipart upload goes through
// as it came (the model renamed, the upstream's key instead of the caller's), every answer equals
// the upstream's own, streams included, and the front charges the audio's exact duration.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, hearth, startServer, waitReady, type TestServer } from '../helpers/server.js';
import { chirp } from '../helpers/signals.js';
import { writeCatalog } from '../helpers/upstream.js';
import { wavBytes } from '../helpers/wav.js';

const PRICE = 0.0002;
let upstream: TestServer;
let front: TestServer;
let direct: OpenAI;
let client: OpenAI;
const samples = chirp(2.5, 200, 3000);
const file = () => toFile(wavBytes(samples, 16_000, { format: 'float32' }), 'clip.wav', { type: 'audio/wav' });

beforeAll(async () => {
  const upDir = await mkdtemp(join(tmpdir(), 'hearth-audio-up-'));
  const upKey = await createKey(upDir);
  upstream = await startServer([], upDir);
  await waitReady(upstream.url);
  direct = new OpenAI({ baseURL: `${upstream.url}/v1`, apiKey: upKey, maxRetries: 0 });
  const frontDir = await mkdtemp(join(tmpdir(), 'hearth-audio-front-'));
  const catalog = await writeCatalog(frontDir, [
    { id: 'svc/remote-whisper', task: 'transcription', class: 'tiny', context_length: 448, upstream: { urls: [`${upstream.url}/v1`], model: 'svc/tiny-whisper', api_key_env: 'UPSTREAM_KEY', probe_interval_ms: 200 }, price: { input_per_1m: 0, output_per_1m: 0, per_audio_second: PRICE } },
  ]);
  const key = await createKey(frontDir, ['--name', 'caller']);
  process.env.UPSTREAM_KEY = upKey;
  front = await startServer(['--catalog', catalog], frontDir);
  await waitReady(front.url);
  client = new OpenAI({ baseURL: `${front.url}/v1`, apiKey: key, maxRetries: 0 });
}, 180_000);
afterAll(async () => {
  await front?.stop();
  await upstream?.stop();
});

describe('transcription through an upstream Hearth', () => {
  it("gives the upstream's own json, verbose_json and srt answers", async () => {
    const ask = (c: OpenAI, model: string, more: object) => c.audio.transcriptions.create({ file: undefined as never, model, language: 'en', ...more } as never);
    for (const more of [{}, { response_format: 'verbose_json', timestamp_granularities: ['segment'] }, { response_format: 'srt' }]) {
      const theirs = await ask(direct, 'svc/tiny-whisper', { ...more, file: await file() });
      const ours = await ask(client, 'svc/remote-whisper', { ...more, file: await file() });
      expect(ours).toEqual(theirs);
    }
    const translated = await client.audio.translations.create({ file: await file(), model: 'svc/remote-whisper' });
    expect(translated).toEqual(await direct.audio.translations.create({ file: await file(), model: 'svc/tiny-whisper' }));
  });

  it('relays a stream of transcript.text events', async () => {
    let joined = '';
    let done = '';
    for await (const ev of await client.audio.transcriptions.create({ file: await file(), model: 'svc/remote-whisper', language: 'en', stream: true })) {
      if (ev.type === 'transcript.text.delta') joined += ev.delta;
      if (ev.type === 'transcript.text.done') done = ev.text;
    }
    const plain = await direct.audio.transcriptions.create({ file: await file(), model: 'svc/tiny-whisper', language: 'en' });
    expect(joined).toBe(plain.text);
    expect(done).toBe(plain.text);
  });

  it("charges the front's caller the audio's exact duration at the front's price", async () => {
    const before = (JSON.parse(await hearth(['usage', '--data-dir', front.dataDir, '--json'])) as { name: string; requests: number; spend_usd: number }[]).find((u) => u.name === 'caller')!;
    await client.audio.transcriptions.create({ file: await file(), model: 'svc/remote-whisper', language: 'en' });
    const after = (JSON.parse(await hearth(['usage', '--data-dir', front.dataDir, '--json'])) as { name: string; requests: number; spend_usd: number }[]).find((u) => u.name === 'caller')!;
    expect(after.requests - before.requests).toBe(1);
    expect(after.spend_usd - before.spend_usd).toBeCloseTo(2.5 * PRICE, 9);
  });
});
