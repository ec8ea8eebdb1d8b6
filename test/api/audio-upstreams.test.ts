// The audio routes beside upstream models, with a stub engine: the engine as the node server
// wraps it (withUpstreams) still transcribes local models, and a transcription model served by
// an upstream is refused with a 400 naming the model (audio is not forwarded yet), never a 500.
import { describe, expect, it } from 'vitest';
import { createRouter } from '../../src/api/router.js';
import type { CatalogEntry } from '../../src/engine/protocol.js';
import type { Runtime } from '../../src/types.js';
import { Upstreams, withUpstreams } from '../../src/upstream/registry.js';
import { audioFields, PER_SECOND, setupAudio, WHISPER } from './audio-harness.js';
import { AUTH, StubAccess } from './stub-access.js';

const REMOTE: CatalogEntry = {
  id: 'svc/remote-whisper',
  task: 'transcription',
  class: '1.5B',
  context_length: 448,
  source: 'upstream:openai/whisper-large-v3',
  upstream: { urls: ['http://gpu.test/v1'], model: 'openai/whisper-large-v3', probe_interval_ms: 60_000 },
  price: { input_per_1m: 0, output_per_1m: 0, per_audio_second: PER_SECOND },
};

async function setup() {
  const sent: string[] = [];
  const upstreams = new Upstreams({
    env: () => undefined,
    transport: async (url) => {
      sent.push(url);
      return Response.json({ object: 'list', data: [] });
    },
  });
  const { engine, runtime: local } = setupAudio();
  const catalog = [...local.catalog(), REMOTE];
  const routed = withUpstreams(engine, upstreams);
  await routed.load(catalog);
  while ((await routed.models()).find((m) => m.id === REMOTE.id)?.status !== 'ready') await new Promise((r) => setTimeout(r, 5));
  const runtime: Runtime = { engine: routed, access: new StubAccess(), catalog: () => catalog, upstreams, close: async () => upstreams.close() };
  const app = createRouter(runtime);
  const postForm = (fields: Record<string, string | Blob>) => {
    const form = new FormData();
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    return app.fetch(new Request('http://hearth.test/v1/audio/transcriptions', { method: 'POST', headers: AUTH, body: form }));
  };
  return { engine, sent, upstreams, postForm };
}

describe('the audio routes beside upstream models, with a stub engine', () => {
  it('transcribe a local model through the engine as the node server wraps it', async () => {
    const { engine, upstreams, postForm } = await setup();
    const res = await postForm(audioFields());
    expect(res.status).toBe(200);
    expect(engine.transcribeCalls.map((r) => r.model)).toEqual([WHISPER]);
    upstreams.close();
  });

  it('refuse an upstream transcription model with a 400 naming the model, sending nothing upstream', async () => {
    const { sent, upstreams, postForm } = await setup();
    const res = await postForm(audioFields({ model: REMOTE.id }));
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatchObject({ param: 'model', code: 'invalid_value', message: expect.stringMatching(/upstream/) });
    expect(sent.filter((u) => u.includes('/audio/'))).toEqual([]);
    upstreams.close();
  });
});
