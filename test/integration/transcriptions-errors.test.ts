// Bad audio through the real server and engine: each refusal is a 400 in OpenAI's envelope with
// x-request-id, naming the field (file, language, model), never a 500; nothing refused is
// charged, and a served file is charged its exact duration × the catalog's price an audio second.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, hearth, startServer, waitReady, type TestServer } from '../helpers/server.js';
import { tone } from '../helpers/signals.js';
import { wavBytes } from '../helpers/wav.js';

const MODEL = 'svc/tiny-whisper';
let server: TestServer;
let key: string;

beforeAll(async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'hearth-audio-errors-'));
  key = await createKey(dataDir, ['--name', 'audio']);
  server = await startServer(['--max-audio-seconds', '4'], dataDir);
  await waitReady(server.url);
}, 120_000);
afterAll(async () => {
  expect(await server?.stop()).toBe(0);
});

async function post(fields: Record<string, string | Blob>): Promise<{ status: number; body: { error?: { type: string; param: string | null; message: string; code: string | null } }; requestId: string | null }> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  const res = await fetch(`${server.url}/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
  return { status: res.status, body: await res.json(), requestId: res.headers.get('x-request-id') };
}

const wav = (seconds: number) => new Blob([wavBytes(tone(seconds, 440), 16_000) as BlobPart], { type: 'audio/wav' });

describe('transcription refusals from the real engine', () => {
  it.each([
    ['a file that is not audio', { file: new Blob([new Uint8Array(300).fill(7)]), model: MODEL }, 'file'],
    ['a WAV with no samples', { file: wav(0), model: MODEL }, 'file'],
    ['audio longer than --max-audio-seconds', { file: wav(5), model: MODEL }, 'file'],
    ['a language Whisper does not know', { file: wav(1), model: MODEL, language: 'xx' }, 'language'],
    ['a model that does not transcribe', { file: wav(1), model: 'svc/tiny-chat' }, 'model'],
  ])('refuses %s with a 400 naming the field', async (_what, fields, param) => {
    const r = await post(fields as Record<string, string | Blob>);
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ type: 'invalid_request_error', param });
    expect(r.body.error!.message.length).toBeGreaterThan(10);
    expect(r.requestId).toBeTruthy();
  });

  it('charges a served file its exact duration, and the refused ones nothing', async () => {
    const r = await post({ file: wav(2.5), model: MODEL, language: 'en' });
    expect(r.status).toBe(200);
    const usage = JSON.parse(await hearth(['usage', '--data-dir', server.dataDir, '--json'])) as { name: string; requests: number; spend_usd: number }[];
    const mine = usage.find((u) => u.name === 'audio')!;
    expect(mine.requests).toBe(1);
    expect(mine.spend_usd).toBeCloseTo(2.5 * 0.0001, 9);
  });
});
