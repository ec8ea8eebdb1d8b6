// A real export's layout in the tab: the Qwen3 fixture (real tokenizer and template, no
// position_ids, num_logits_to_keep, fp32 weights in two external data chunks) fetched from
// a hub mirror into the Cache API and run by onnxruntime-web with its `externalData`
// option. Its greedy reply and prompt length are Node's, which equal transformers.js's
// (test/engine/models/parity.test.ts).
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeBackend } from '../../src/backends/node.js';
import { createEngine } from '../../src/engine/engine.js';
import { exportFixtures, referencePromptIds } from '../helpers/exports.js';
import { CHROMIUM, freshBrowser, inPage, mirrorHits, openDemo, startDemo, type DemoServer } from './harness.js';

const suite = CHROMIUM ? describe : describe.skip;
const MESSAGES = [{ role: 'user', content: 'Hello there' }];
let server: DemoServer;
let node: { text: string; prompt_tokens: number };

beforeAll(async () => {
  if (!CHROMIUM) return;
  const dir = await exportFixtures();
  const engine = createEngine(nodeBackend('cpu'), { kvCacheMb: 0 });
  await engine.load([{ id: 'svc/q', task: 'chat', class: 't', context_length: 2048, source: join(dir, 'qwen3-export'), dtype: { cpu: 'fp32' }, price: { input_per_1m: 0, output_per_1m: 0 } }]);
  for (let i = 0; i < 400 && (await engine.models())[0]!.status === 'starting'; i++) await new Promise((r) => setTimeout(r, 50));
  const sampling = { max_tokens: 8, temperature: 0, top_p: 1, top_k: -1, min_p: 0, presence_penalty: 0, frequency_penalty: 0, stop: [], stop_token_ids: [], ignore_eos: false, logprobs: -1 };
  node = await engine.generate({ id: 'n', model: 'svc/q', prompt: { messages: MESSAGES }, sampling }, () => undefined);
  await engine.dispose();
  server = await startDemo();
}, 180_000);

afterAll(async () => {
  await server?.close();
});

for (const device of ['wasm', 'webgpu'] as const) {
  // WebGPU here is SwiftShader (no shader-f16): the fp32 file, as the demo's hub entry asks.
  suite(`a real export in the tab (${device})`, () => {
    const browser = freshBrowser();

    it("loads external data chunks through the Cache API and answers with Node's greedy text and transformers.js's prompt length", async () => {
      const hub = `${server.url}mirror`;
      const { page, info } = await openDemo(browser.context, `${server.url}?device=${device}&hubModel=test-org/qwen3-export&hub=${encodeURIComponent(hub)}`);
      expect(info.device).toBe(device);
      expect(info.models).toContain('svc/hub-qwen3-export');
      const r = await inPage(page, 'post', info, '/v1/chat/completions', { model: 'svc/hub-qwen3-export', messages: MESSAGES, temperature: 0, max_tokens: 8 });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(node.text.length).toBeGreaterThan(0);
      expect(r.body.choices[0].message.content).toBe(node.text);
      expect(r.body.usage.prompt_tokens).toBe((await referencePromptIds('qwen3-export', MESSAGES)).length);
      for (const f of ['onnx/model.onnx_data', 'onnx/model.onnx_data_1']) {
        expect(mirrorHits.some((u) => u.endsWith(`/qwen3-export/resolve/main/${f}`)), f).toBe(true);
      }
      const cached = (await page.evaluate('caches.open("hearth-models-v1").then((c) => c.keys()).then((ks) => ks.map((r) => r.url))')) as string[];
      expect(cached).toContain(`${hub}/test-org/qwen3-export/resolve/main/onnx/model.onnx_data_1`);
      await page.close();
    }, 300_000);
  });
}

// Every other export interface: fp16 (float16 weights, KV and logits), q4 (MatMulNBits
// with float32 activations), q4f16 (with float16 activations, float16 KV and logits, held
// as Float16Array where the browser has one) and q8 (MatMulInteger), on WASM; q4 on
// WebGPU too. SwiftShader's WebGPU has no shader-f16, so float16 variants are not run on
// WebGPU here.
suite('real export dtypes in the tab', () => {
  const browser = freshBrowser();
  const sampling = { max_tokens: 8, temperature: 0, top_p: 1, top_k: -1, min_p: 0, presence_penalty: 0, frequency_penalty: 0, stop: [], stop_token_ids: [], ignore_eos: false, logprobs: -1 };

  it.each([
    ['fp16', 'wasm'],
    ['q4', 'wasm'],
    ['q4f16', 'wasm'],
    ['q8', 'wasm'],
    ['q4', 'webgpu'],
  ])("llama3-export %s on %s answers with Node's greedy text", async (dtype, device) => {
    const dir = await exportFixtures();
    const engine = createEngine(nodeBackend('cpu'), { kvCacheMb: 0 });
    await engine.load([{ id: 'svc/l', task: 'chat', class: 't', context_length: 2048, source: join(dir, 'llama3-export'), dtype: { cpu: dtype }, price: { input_per_1m: 0, output_per_1m: 0 } }]);
    for (let i = 0; i < 400 && (await engine.models())[0]!.status === 'starting'; i++) await new Promise((r) => setTimeout(r, 50));
    const expected = await engine.generate({ id: 'n', model: 'svc/l', prompt: { messages: MESSAGES }, sampling }, () => undefined);
    await engine.dispose();
    expect(expected.text.length).toBeGreaterThan(0);

    const hub = `${server.url}mirror`;
    const { page, info } = await openDemo(browser.context, `${server.url}?device=${device}&hubModel=test-org/llama3-export&hubDtype=${dtype}&hub=${encodeURIComponent(hub)}`);
    expect(info.device).toBe(device);
    const r = await inPage(page, 'post', info, '/v1/chat/completions', { model: 'svc/hub-llama3-export', messages: MESSAGES, temperature: 0, max_tokens: 8 });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.choices[0].message.content).toBe(expected.text);
    expect(r.body.usage.prompt_tokens).toBe(expected.prompt_tokens);
    await page.close();
  }, 300_000);
});

// A decoder embedder's export (Qwen3-Embedding's interface: last_hidden_state out, an empty
// KV in, last-token pooling) in the tab gives Node's vectors, which equal transformers.js's
// (test/engine/models/decoder-embedder-parity.test.ts).
suite('a decoder embedder export in the tab (wasm)', () => {
  const browser = freshBrowser();
  const INPUTS = ['a short one', 'a rather longer sentence about rivers and stones'];

  it("embeds with Node's last-token, normalised vectors and token counts", async () => {
    const dir = await exportFixtures();
    const engine = createEngine(nodeBackend('cpu'));
    await engine.load([{ id: 'svc/e', task: 'embedding', class: 't', context_length: 512, source: join(dir, 'qwen3-embed-export'), dtype: { cpu: 'fp32' }, price: { input_per_1m: 0, output_per_1m: 0 } }]);
    for (let i = 0; i < 400 && (await engine.models())[0]!.status === 'starting'; i++) await new Promise((r) => setTimeout(r, 50));
    const expected = await engine.embed({ model: 'svc/e', input: INPUTS });
    await engine.dispose();

    const hub = `${server.url}mirror`;
    const { page, info } = await openDemo(browser.context, `${server.url}?device=wasm&hubModel=test-org/qwen3-embed-export&hubTask=embedding&hub=${encodeURIComponent(hub)}`);
    const r = await inPage(page, 'post', info, '/v1/embeddings', { model: 'svc/hub-qwen3-embed-export', input: INPUTS, encoding_format: 'float' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data).toHaveLength(INPUTS.length);
    r.body.data.forEach((d: { embedding: number[] }, i: number) => {
      expect(d.embedding).toHaveLength(expected.data[i]!.length);
      d.embedding.forEach((x, k) => expect(x).toBeCloseTo(expected.data[i]![k]!, 4));
    });
    expect(r.body.usage.prompt_tokens).toBe(expected.prompt_tokens);
    await page.close();
  }, 300_000);
});
