// On WebGPU (SwiftShader here) the batch's KV cache stays in GPU buffers between decode
// steps: it is read back to the CPU only when a sequence is prefilled or the batch
// changes, never once per token, and the greedy text is Node's.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeBackend } from '../../src/backends/node.js';
import { createEngine } from '../../src/engine/engine.js';
import type { ModelStats } from '../../src/engine/protocol.js';
import { fixtures } from '../helpers/fixtures.js';
import { CHROMIUM, freshBrowser, inPage, openDemo, startDemo, type DemoServer } from './harness.js';

const suite = CHROMIUM ? describe : describe.skip;
const TOKENS = 24;
const BODY = { model: 'svc/tiny-chat', messages: [{ role: 'user', content: 'Tell me a long story about the sea.' }], temperature: 0, max_tokens: TOKENS };
let server: DemoServer;
let nodeText: string;

beforeAll(async () => {
  if (!CHROMIUM) return;
  const dir = await fixtures();
  const engine = createEngine(nodeBackend('cpu'));
  await engine.load([{ id: 'svc/tiny-chat', task: 'chat', class: 't', context_length: 2048, source: join(dir, 'tiny-chat'), price: { input_per_1m: 0, output_per_1m: 0 } }]);
  for (let i = 0; i < 200 && (await engine.models())[0]!.status === 'starting'; i++) await new Promise((r) => setTimeout(r, 50));
  const sampling = { max_tokens: TOKENS, temperature: 0, top_p: 1, top_k: -1, min_p: 0, presence_penalty: 0, frequency_penalty: 0, stop: [], stop_token_ids: [], ignore_eos: false, logprobs: -1 };
  nodeText = (await engine.generate({ id: 'n', model: 'svc/tiny-chat', prompt: { messages: BODY.messages }, sampling }, () => undefined)).text;
  await engine.dispose();
  server = await startDemo();
}, 180_000);

afterAll(async () => {
  await server?.close();
});

suite('the KV cache on WebGPU', () => {
  const browser = freshBrowser();

  it('is read back to the CPU once per request (prefill, then the end), not once per token, and batched requests keep their own text', async () => {
    const { page, info } = await openDemo(browser.context, `${server.url}?device=webgpu`);
    expect(info.device).toBe('webgpu');
    const reads = async () =>
      ((await page.evaluate('window.__hearth.runtime.engine.stats()')) as { models: ModelStats[] }).models.find((m) => m.id === 'svc/tiny-chat')!.kv_device_reads!;
    const before = await reads();
    const r = await inPage(page, 'post', info, '/v1/chat/completions', BODY);
    expect(r.status).toBe(200);
    expect(r.body.choices[0].message.content).toBe(nodeText);
    const steps = r.body.usage.completion_tokens - 1;
    expect(steps).toBeGreaterThan(5);
    // The prefill's cache, read to join the batch, and the batch's at the end: none per decode step.
    expect((await reads()) - before).toBe(2);

    // Joining and leaving read the batch back and repack it: batched text is still each request's own.
    const bodies = ['fire', 'ice'].map((w) => ({ ...BODY, max_tokens: 8, messages: [{ role: 'user', content: `What is ${w}?` }] }));
    const alone = [];
    for (const b of bodies) alone.push((await inPage(page, 'post', info, '/v1/chat/completions', b)).body.choices[0].message.content);
    const together = await Promise.all(bodies.map((b) => inPage(page, 'post', info, '/v1/chat/completions', b)));
    expect(together.map((t) => t.body.choices[0].message.content)).toEqual(alone);
    await page.close();
  }, 300_000);
});
