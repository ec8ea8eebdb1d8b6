// The demo's picture input in a real headless Chromium tab: with a VLM chosen (the SmolVLM
// fixture from the test's hub mirror), a picture picked with the file input, or pasted into the
// prompt, rides with the question as a blob: URL, and the reply's prompt holds its image tokens
// (transformers.js's count for the same picture and question). For a text model there is none.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportFixtures } from '../helpers/exports.js';
import { noisePng, referenceImageReply, VLM_FIXTURE } from '../helpers/vision.js';
import { CHROMIUM, freshBrowser, openDemo, startDemo, type DemoServer } from './harness.js';

const VLM = `svc/hub-${VLM_FIXTURE}`;
const QUESTION = 'What is in this picture?';

describe.skipIf(!CHROMIUM)("the demo's picture input", () => {
  let server: DemoServer;
  let page: Page;
  let errors: string[];
  let picture: Buffer;
  let promptTokens: number;
  const browser = freshBrowser();

  beforeAll(async () => {
    await exportFixtures();
    picture = await noisePng(40, 32, 5);
    ({ promptTokens } = await referenceImageReply(picture, QUESTION, 1));
    server = await startDemo();
    const hub = encodeURIComponent(`${server.url}mirror`);
    ({ page, errors } = await openDemo(browser.context, `${server.url}?device=wasm&models=svc/tiny-chat&hubModel=test-org/${VLM_FIXTURE}&hub=${hub}`));
    await page.waitForSelector('#send:not([disabled])');
  }, 300_000);

  afterAll(async () => {
    await server?.close();
  });

  // The thumbnail has a size, and so counts as visible, once the page has decoded the picture:
  // on a loaded machine that is a moment after the input or paste, so it is waited for.
  const showsThumb = () => page.waitForSelector('#thumb', { state: 'visible', timeout: 10_000 });

  it('offers no picture for a text model, and one for the VLM', async () => {
    await page.selectOption('#model', 'svc/tiny-chat');
    expect(await page.isHidden('#attach')).toBe(true);
    await page.selectOption('#model', VLM);
    expect(await page.isVisible('#attach')).toBe(true);
  });

  it("sends a picked picture with the question: the prompt counts transformers.js's image tokens, and the bubble shows the picture", async () => {
    await page.setInputFiles('#picture', { name: 'noise.png', mimeType: 'image/png', buffer: picture });
    await showsThumb();
    await page.fill('#prompt', QUESTION);
    await page.click('#send');
    await page.waitForFunction(() => /prompt tokens/.test(document.getElementById('chat-stats')!.textContent ?? ''), undefined, { timeout: 120_000 });
    expect(await page.textContent('#chat-stats')).toMatch(new RegExp(`^${promptTokens} prompt tokens · \\d+ tokens in`));
    expect(await page.locator('.msg.user img').count()).toBe(1);
    expect(await page.locator('.msg.assistant.error').count()).toBe(0);
    expect(await page.isHidden('#thumb')).toBe(true);
  }, 180_000);

  it('attaches a picture pasted into the prompt', async () => {
    await page.evaluate((bytes) => {
      const data = new DataTransfer();
      data.items.add(new File([new Uint8Array(bytes)], 'pasted.png', { type: 'image/png' }));
      document.getElementById('prompt')!.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
    }, [...picture]);
    await showsThumb();
    expect(await page.getAttribute('#thumb', 'src')).toMatch(/^blob:/);
  });

  it('logged no page errors', () => {
    expect(errors).toEqual([]);
  });
});
