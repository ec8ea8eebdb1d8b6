// Images in chat in a real headless Chromium tab, on WASM and on WebGPU (SwiftShader here): the
// SmolVLM fixture, loaded through the test's hub mirror, answers the page's own fetch in the
// tab with transformers.js's greedy reply for the same folder and bytes, whether the picture
// comes as a data: URL, a blob: URL or a same-origin URL, through the openai SDK (chat and
// Responses), the AI SDK or LangChain. The browser decodes the image (createImageBitmap and an
// OffscreenCanvas in the engine's worker).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CatalogEntry } from '../../src/engine/protocol.js';
import { exportFixtures } from '../helpers/exports.js';
import { noisePng, QWEN2VL_FIXTURE, referenceImageReply, VLM_FIXTURE } from '../helpers/vision.js';
import { CHROMIUM, freshBrowser, mirrorFolders, openDemo, pageModuleCaller, startDemo, type DemoServer, type HearthInfo } from './harness.js';
import type { VisionAsk } from './page-vision.js';

const call = pageModuleCaller<typeof import('./page-vision.js')>('page-vision.ts');
const inEngine = pageModuleCaller<typeof import('./page-engine.js')>('page-engine.ts');
const suite = CHROMIUM ? describe : describe.skip;

const MODEL = 'svc/vision';
const QUESTION = 'What is in this picture?';
const MAX_TOKENS = 6;
/** The mirror's stand-in repo that holds the picture, served on the demo's own origin. */
const PICTURES = 'vision-pictures';

let server: DemoServer;
let picture: Buffer;
let reference: { text: string; promptTokens: number };
/** transformers.js's reply of the Qwen2-VL fixture to the same picture and question. */
let qwenReference: { text: string; promptTokens: number };
const QWEN = 'svc/vision-qwen2vl';
let pictureDir: string;

beforeAll(async () => {
  if (!CHROMIUM) return;
  await exportFixtures();
  picture = await noisePng(48, 40, 21);
  reference = await referenceImageReply(picture, QUESTION, MAX_TOKENS);
  qwenReference = await referenceImageReply(picture, QUESTION, MAX_TOKENS, QWEN2VL_FIXTURE);
  pictureDir = mkdtempSync(join(tmpdir(), 'hearth-pictures-'));
  writeFileSync(join(pictureDir, 'cat.png'), picture);
  mirrorFolders.set(PICTURES, pictureDir);
  server = await startDemo({}, ['ai', '@ai-sdk/openai-compatible', '@langchain/openai', '@langchain/core/messages']);
}, 300_000);

afterAll(async () => {
  await server?.close();
  mirrorFolders.delete(PICTURES);
  if (pictureDir) rmSync(pictureDir, { recursive: true, force: true });
});

const entry = (device: string, id = MODEL, fixture = VLM_FIXTURE): CatalogEntry => ({
  id, task: 'chat', class: 't', context_length: 2048, source: `test-org/${fixture}`, dtype: { [device]: 'fp32' }, price: { input_per_1m: 0, output_per_1m: 0 },
});

for (const device of ['wasm', 'webgpu'] as const) {
  suite(`a chat with an image in the page on ?device=${device}`, () => {
    const browser = freshBrowser();
    let page: Page;
    let info: HearthInfo;
    let errors: string[];
    let states: { status: string; detail?: string }[];
    let r: Awaited<ReturnType<typeof import('./page-vision.js').visionFlow>>;
    let qwen: Awaited<ReturnType<typeof import('./page-vision.js').askOnce>>;

    beforeAll(async () => {
      const hub = `${server.url}mirror`;
      ({ page, info, errors } = await openDemo(browser.context, `${server.url}?device=${device}&models=svc/tiny-chat&hub=${encodeURIComponent(hub)}`));
      states = await inEngine(page, 'addModels', [entry(device), entry(device, QWEN, QWEN2VL_FIXTURE)]);
      const ask: VisionAsk = {
        model: MODEL,
        png: picture.toString('base64'),
        sameOrigin: `/mirror/test-org/${PICTURES}/resolve/main/cat.png`,
        question: QUESTION,
        maxTokens: MAX_TOKENS,
        textModel: 'svc/tiny-chat',
      };
      if (states.every((s) => s.status === 'ready')) {
        r = await call(page, 'visionFlow', info, ask);
        qwen = await call(page, 'askOnce', info, QWEN, ask.png, QUESTION, MAX_TOKENS);
      }
    }, 480_000);

    it('loads the VLM from the hub mirror on the device asked for, listed with input_modalities text and image', () => {
      expect(info.device).toBe(device);
      expect(states).toEqual([expect.objectContaining({ status: 'ready' }), expect.objectContaining({ status: 'ready' })]);
      expect(r.models).toEqual(expect.arrayContaining([{ id: MODEL, input_modalities: ['text', 'image'] }, { id: 'svc/tiny-chat', input_modalities: ['text'] }]));
    });

    it("gets transformers.js's greedy reply and prompt count for the picture as a data: URL, a blob: URL and a same-origin URL", () => {
      expect(r.chat).toEqual(reference);
      expect(r.blob).toEqual(reference);
      expect(r.sameOrigin).toEqual(reference);
    });

    it("serves a Qwen2-VL model beside it: transformers.js's reply and prompt count (dynamic resolution, multimodal positions)", () => {
      expect(qwen).toEqual(qwenReference);
    });

    it("gets the same reply from the Responses API's input_image, the AI SDK's image part and LangChain's image_url part", () => {
      expect(r.responses).toEqual({ text: reference.text, inputTokens: reference.promptTokens });
      expect(r.aiSdk).toBe(reference.text);
      expect(r.langchain).toBe(reference.text);
    });

    it("refuses another origin's URL, a missing same-origin picture and an image for a text model with a 400 naming the part or its URL", () => {
      expect(r.refused.otherOrigin).toMatchObject({ status: 400, param: 'messages[0].content[0].image_url.url' });
      expect(r.refused.otherOrigin.message).toMatch(/only from this page's blob: URLs and URLs of http:\/\/localhost:\d+/);
      expect(r.refused.missing).toMatchObject({ status: 400, param: 'messages[0].content[0].image_url.url' });
      expect(r.refused.missing.message).toMatch(/answered 404/);
      expect(r.refused.textModel).toMatchObject({ status: 400, param: 'messages[0].content[0]' });
      expect(r.refused.textModel.message).toMatch(/takes no images/);
    });

    it('logged no page errors', () => {
      expect(errors).toEqual([]);
    });
  });
}
