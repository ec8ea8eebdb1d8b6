// decodeAudio runs in a browser's module Web Worker (no Node API, no Web Audio there): real
// headless Chromium, the worker served by Vite as a page's bundler would serve it, decodes each
// format's fixture to what Node decodes, and refuses garbage with the same EngineError. m4a is the
// exception: its decoder (@audio/decode-aac, GPL-2.0) is an optional peer that bundles never take,
// so a worker names the missing package (the page decodes m4a with Web Audio before the worker).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type ViteDevServer } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../demo/config.js';
import { decodeAudio } from '../../src/engine/speech/decode-audio.js';
import { audioFixture } from '../engine/speech/measure.js';
import type { WorkerAnswer } from './decode-audio-worker.js';
import { CHROMIUM, launch, type Browser } from './harness.js';

const FILES = ['speech-en.wav', 'tone-440hz.flac', 'tone-440hz.mp3', 'tone-440hz-vorbis.ogg', 'tone-440hz-opus.ogg', 'tone-440hz.webm'];
const DECODERS = ['@audio/decode-wav', '@audio/decode-flac', '@audio/decode-mp3', '@audio/decode-vorbis', '@audio/decode-opus', '@audio/decode-opus/core', '@alexanderolsen/libsamplerate-js'];

const suite = CHROMIUM ? describe : describe.skip;

suite('decodeAudio in a Web Worker', () => {
  let server: ViteDevServer;
  let browser: Browser;
  let url: string;
  const cacheDir = mkdtempSync(join(tmpdir(), 'hearth-vite-'));

  beforeAll(async () => {
    server = await createServer({
      root: REPO_ROOT,
      configFile: false,
      cacheDir,
      appType: 'custom',
      logLevel: 'error',
      // Optimized up front: found mid-run, a dependency makes Vite re-optimize and reload.
      optimizeDeps: { include: DECODERS, noDiscovery: true },
      server: { port: 0, host: 'localhost', hmr: false, watch: { ignored: ['**/*'] } },
      plugins: [
        {
          name: 'blank-page',
          configureServer(s) {
            s.middlewares.use((req, res, next) => {
              if (req.url !== '/') return next();
              res.setHeader('content-type', 'text/html');
              res.end('<!doctype html><title>decode-audio worker</title>');
            });
          },
        },
      ],
    });
    await server.listen();
    const address = server.httpServer!.address() as { port: number };
    url = `http://localhost:${address.port}/`;
    browser = await launch();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    rmSync(cacheDir, { recursive: true, force: true });
  });

  it('decodes every format to what Node decodes, and refuses garbage as param file', async () => {
    const page = await browser.context.newPage();
    await page.goto(url);
    const answers = (await page.evaluate(
      (files) =>
        new Promise((resolve, reject) => {
          const worker = new Worker('/test/browser/decode-audio-worker.ts', { type: 'module' });
          worker.onmessage = (e) => resolve(e.data);
          worker.onerror = (e) => reject(new Error(`worker failed: ${e.message}`));
          worker.postMessage({ files });
        }),
      [...FILES, 'tone-440hz.m4a', 'garbage'],
    )) as WorkerAnswer[];

    for (const file of FILES) {
      const inWorker = answers.find((a) => a.file === file)!;
      expect(inWorker.error, file).toBeUndefined();
      const inNode = await decodeAudio(audioFixture(file));
      let sum = 0;
      for (const s of inNode.samples) sum += s * s;
      expect(inWorker.duration, file).toBeCloseTo(inNode.duration, 9);
      expect(inWorker.length, file).toBe(inNode.samples.length);
      expect(inWorker.rms!, file).toBeCloseTo(Math.sqrt(sum / inNode.samples.length), 5);
    }
    expect(answers.find((a) => a.file === 'garbage')!.error).toMatchObject({ name: 'EngineError', code: 'invalid_value', param: 'file' });
    const m4a = answers.find((a) => a.file === 'tone-440hz.m4a')!.error;
    expect(m4a).toMatchObject({ name: 'EngineError', code: 'invalid_value', param: 'file' });
    expect(m4a!.message).toContain('@audio/decode-aac');
  }, 120_000);
});
