// Speech to text in a real headless Chromium tab, on WASM: the page's unmodified openai SDK posts
// a File, answered in the tab by the tiny-whisper fixture on onnxruntime-web (audio decoded in
// the engine's worker), with transformers.js's text on Node for the same samples.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chirp } from '../helpers/signals.js';
import { referenceTranscript } from '../helpers/speech.js';
import { CHROMIUM, freshBrowser, openDemo, pageModuleCaller, startDemo, type DemoServer, type HearthInfo } from './harness.js';

const call = pageModuleCaller<typeof import('./page-transcription.js')>('page-transcription.ts');
const suite = CHROMIUM ? describe : describe.skip;

const MODELS = ['svc/tiny-chat', 'svc/tiny-whisper'];
const MODEL = 'svc/tiny-whisper';
const samples = chirp(3, 200, 3000);

let server: DemoServer;
let reference: { text: string; segments: { text: string; timestamp: [number, number | null] }[] };

beforeAll(async () => {
  if (!CHROMIUM) return;
  const [demo, plain, timed] = await Promise.all([startDemo(), referenceTranscript(samples), referenceTranscript(samples, { timestamps: true })]);
  server = demo;
  reference = { text: plain.text, segments: timed.chunks! };
}, 180_000);

afterAll(async () => {
  await server?.close();
});

suite('transcription in the page on ?device=wasm', () => {
  const browser = freshBrowser();
  let info: HearthInfo;
  let errors: string[];
  let r: Awaited<ReturnType<typeof import('./page-transcription.js').transcriptionFlow>>;

  beforeAll(async () => {
    const tab = await openDemo(browser.context, `${server.url}?device=wasm&models=${MODELS.join(',')}`);
    ({ info, errors } = tab);
    const m4a = readFileSync(join(import.meta.dirname, '../fixtures/audio/tone-440hz.m4a'));
    r = await call(tab.page, 'transcriptionFlow', info, MODEL, Array.from(samples), Array.from(m4a));
  }, 240_000);

  it("answers the openai SDK's file with transformers.js's text", () => {
    expect(info.models).toEqual(MODELS);
    expect(r.json.text).toBe(reference.text);
    expect(r.streamed).toBe(reference.text);
  });

  it("gives transformers.js's segments in verbose_json and the same in srt", () => {
    expect(r.verbose.segments!.map((s) => s.text.trim())).toEqual(reference.segments.map((c) => c.text.trim()));
    expect(r.verbose.segments!.map((s) => s.start)).toEqual(reference.segments.map((c) => c.timestamp[0]));
    expect(r.srt.trim().split(/\n\n+/).length).toBe(r.verbose.segments!.length);
  });

  it("transcribes an m4a file, decoded by the page's Web Audio", () => {
    expect(r.memo.text.length).toBeGreaterThan(0);
  });

  it('refuses a file that is not audio with a 400 naming file', () => {
    expect(r.refused).toEqual({ status: 400, param: 'file' });
  });

  it('logged no page errors', () => {
    expect(errors).toEqual([]);
  });
});
