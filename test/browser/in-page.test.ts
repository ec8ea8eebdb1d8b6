// Hearth in a real headless Chromium tab: the demo page's runtime answers an
// unmodified openai SDK (and fetch) through MSW's service worker, on WASM and on
// WebGPU (SwiftShader here: slow, but the same graph on the WebGPU execution
// provider), with the same greedy text as onnxruntime-node.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, freshBrowser, inPage, openDemo, startDemo, type DemoServer, type HearthInfo } from './harness.js';
import { nodeReference } from './node-reference.js';
import type { Page } from 'playwright-core';

const suite = CHROMIUM ? describe : describe.skip;

let server: DemoServer;
let node: Awaited<ReturnType<typeof nodeReference>>;

beforeAll(async () => {
  if (!CHROMIUM) return;
  [server, node] = await Promise.all([startDemo(), nodeReference()]);
}, 180_000);

afterAll(async () => {
  await server?.close();
  await node?.close();
});

const REQUESTS = {
  chat: { model: 'svc/tiny-chat', messages: [{ role: 'user', content: 'Hello!' }], temperature: 0, max_tokens: 12 },
  completion: { model: 'svc/tiny-chat', prompt: 'Once upon a time', max_tokens: 8, temperature: 0 },
  generate: { text: 'Once upon a time', sampling_params: { max_new_tokens: 8, temperature: 0 } },
};

for (const device of ['wasm', 'webgpu'] as const) {
  suite(`in the page on ?device=${device}`, () => {
    const browser = freshBrowser();
    let page: Page;
    let info: HearthInfo;
    let errors: string[];

    beforeAll(async () => {
      ({ page, info, errors } = await openDemo(browser.context, `${server.url}?device=${device}`));
    }, 240_000);

    it('window.hearth resolves with the contract: absolute baseURL, a well-formed key, the device asked for, the models', async () => {
      expect(info.baseURL).toBe(`${server.url}v1`);
      expect(info.apiKey).toMatch(/^svc_live_[0-9A-Za-z]{32,}$/);
      expect(info.device).toBe(device);
      expect(info.models).toEqual(['svc/tiny-chat', 'svc/tiny-embed']);
      const isolated = await page.evaluate(() => self.crossOriginIsolated);
      expect(isolated).toBe(true);
    });

    it('serves models, chat, streamed chat, completions, base64 embeddings and /generate to the unmodified openai SDK, with the same greedy text as Node', async () => {
      const r = await inPage(page, 'sdkFlow', info);
      expect(r.models).toEqual(['svc/tiny-chat', 'svc/tiny-embed']);

      const [chat, completion, generate] = await Promise.all([
        node.post('/v1/chat/completions', REQUESTS.chat),
        node.post('/v1/completions', REQUESTS.completion),
        node.post('/generate', REQUESTS.generate),
      ]);
      expect(r.chat.text).toBe(chat.choices[0].message.content);
      expect(r.chat.text!.length).toBeGreaterThan(0);
      expect(r.chat.finish).toBe(chat.choices[0].finish_reason);
      expect(r.chat.usage).toMatchObject({ prompt_tokens: chat.usage.prompt_tokens, completion_tokens: chat.usage.completion_tokens });
      expect(r.stream.text).toBe(r.chat.text);
      expect(r.stream.chunks).toBeGreaterThan(2);
      expect(r.stream.finish).toBe(r.chat.finish);
      expect(r.stream.usage).toBe(r.chat.usage!.completion_tokens);
      expect(r.completion).toBe(completion.choices[0].text);
      expect(r.generate.status).toBe(200);
      expect(r.generate.body.text).toEqual(generate.text);
      expect(r.embeddings).toMatchObject({ count: 2, dim: 1536 });
      expect(r.embeddings.norm).toBeCloseTo(1, 4);
      expect(r.unauthorized).toEqual({ status: 401, code: 'invalid_api_key' });
      expect(r.health).toMatchObject({ status: 'ok', models: { 'svc/tiny-chat': 'ready', 'svc/tiny-embed': 'ready' }, engine: { kind: 'shared', pages: 1 } });
      expect(r.health.model_details['svc/tiny-chat']).toMatchObject({ status: 'ready', expires_at: null });
    }, 240_000);

    if (device === 'webgpu') {
      it('on device loss, ends the stream in flight with a device_lost error event, takes a new device and serves the next request', async () => {
        const before = await inPage(page, 'greedyChat', info);
        const r = await inPage(page, 'deviceLossDuringStream', info);
        expect(r.status).toBe(200);
        expect(JSON.parse(r.last.slice(6))).toMatchObject({ error: { type: 'unavailable_error', code: 'device_lost' } });
        expect(JSON.parse(r.last.slice(6)).error.message).toMatch(/^The WebGPU device was lost \(destroyed/);
        for (const m of r.meanwhile) expect(m).toMatchObject({ status: 503 });
        expect(r.after.body.choices[0].message.content).toBe(before.body.choices[0].message.content);
        expect(await page.evaluate('window.hearth.then((h) => h.device)')).toBe('webgpu');
      }, 240_000);
    }

    it('logged no page errors', () => {
      expect(errors).toEqual([]);
    });
  });
}

suite('streaming in the page (WASM)', () => {
  const browser = freshBrowser();
  let page: Page;
  let info: HearthInfo;

  beforeAll(async () => {
    ({ page, info } = await openDemo(browser.context, `${server.url}?device=wasm`));
  }, 240_000);

  it('sends tokens as they are produced: a long /generate stream arrives in many pieces spread over its run', async () => {
    const r = await inPage(page, 'generateStreamTiming', info, 300);
    expect(r.status).toBe(200);
    expect(r.done).toBe(true);
    expect(r.completionTokens).toBe(300);
    const times = r.arrivals.map((a) => a.at);
    const events = r.arrivals.reduce((n, a) => n + a.events, 0);
    console.log(
      `[browser] /generate stream on WASM: 300 tokens, ${events} events in ${times.length} network chunks, ` +
        `first at ${times[0]!.toFixed(0)} ms (${r.arrivals[0]!.events} events), last at ${times.at(-1)!.toFixed(0)} ms`,
    );
    // Buffered, everything would arrive in one or two pieces at the end. (The first piece
    // holds what was produced while the response crossed into the service worker.)
    expect(times.length).toBeGreaterThanOrEqual(20);
    expect(r.arrivals[0]!.events).toBeLessThan(events / 2);
    expect(times.at(-1)!).toBeGreaterThan(times[0]!);
  }, 240_000);

  it('the SDK chat stream delivers its content chunks while the model is still producing, in each of 20 runs', async () => {
    const runs = await inPage(page, 'chatStreamTimings', info, 20);
    const early = runs.map(({ produced, arrived }) => {
      expect(arrived.length).toBeGreaterThan(2);
      expect([...arrived].sort((a, b) => a - b)).toEqual(arrived);
      // Buffered anywhere between the engine and the reader, every chunk would arrive
      // after the last token was produced (one burst); streamed, most arrive before.
      return arrived.filter((t) => t < produced.at(-1)!).length / arrived.length;
    });
    console.log(`[browser] SDK chat streams: share of content chunks read before the last token was produced, per run: ${early.map((f) => f.toFixed(2)).join(' ')}`);
    for (const f of early) expect(f).toBeGreaterThanOrEqual(0.5);
  }, 120_000);
});
