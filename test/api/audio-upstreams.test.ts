// The audio routes beside upstream models, with a stub engine: the engine as the node server
// wraps it (withUpstreams) still transcribes local models, and a transcription model served by
// an upstream gets the caller's form forwarded to the upstream's audio path, the model renamed,
// with the upstream's answer relayed (test/integration/upstream-transcriptions.test.ts runs it
// against a real upstream Hearth).
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
  const forms: FormData[] = [];
  const upstreams = new Upstreams({
    env: () => undefined,
    transport: async (url, init) => {
      sent.push(url);
      if (!url.includes('/audio/')) return Response.json({ object: 'list', data: [] });
      forms.push(await new Response(init.body, { headers: init.headers }).formData());
      return Response.json({ text: 'from the upstream', usage: { type: 'duration', seconds: 2 } });
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
  return { engine, sent, forms, upstreams, postForm };
}

describe('the audio routes beside upstream models, with a stub engine', () => {
  it('transcribe a local model through the engine as the node server wraps it', async () => {
    const { engine, upstreams, postForm } = await setup();
    const res = await postForm(audioFields());
    expect(res.status).toBe(200);
    expect(engine.transcribeCalls.map((r) => r.model)).toEqual([WHISPER]);
    upstreams.close();
  });

  it("forward an upstream transcription model's form to its audio path, the model renamed, and relay the answer", async () => {
    const { engine, sent, forms, upstreams, postForm } = await setup();
    const res = await postForm(audioFields({ model: REMOTE.id, language: 'de' }));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ text: 'from the upstream', usage: { type: 'duration', seconds: 2 } });
    expect(sent.filter((u) => u.includes('/audio/'))).toEqual(['http://gpu.test/v1/audio/transcriptions']);
    expect(forms[0]!.get('model')).toBe('openai/whisper-large-v3');
    expect(forms[0]!.get('language')).toBe('de');
    expect(forms[0]!.get('file')).toBeInstanceOf(Blob);
    expect(engine.transcribeCalls).toEqual([]);
    upstreams.close();
  });
});
