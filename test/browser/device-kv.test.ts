// On WebGPU (SwiftShader here) the KV cache lives on the GPU: decode steps feed the
// batch's present.* buffers back, and sequences joining and leaving the batch are
// repacked there (buffer-to-buffer copies), so batching never reads the cache back to
// the CPU. What is still read back is only what the prefix cache stores (it keeps host
// arrays), and nothing once it holds a request's prompt and reply. Greedy text is Node's.
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeBackend } from '../../src/backends/node.js';
import { createEngine } from '../../src/engine/engine.js';
import type { ModelStats } from '../../src/engine/protocol.js';
import { fixtures } from '../helpers/fixtures.js';
import { CHROMIUM, freshBrowser, inPage, openDemo, startDemo, type DemoServer, type HearthInfo } from './harness.js';

const suite = CHROMIUM ? describe : describe.skip;
const MODEL = 'svc/tiny-chat';
const ask = (content: string, max_tokens: number) => ({ model: MODEL, messages: [{ role: 'user', content }], temperature: 0, max_tokens });
/** The long one runs while the others join its batch, and they leave at different steps. */
const LONG = ask('Tell me a long story about the sea.', 24);
const SHORT = [ask('What is fire?', 6), ask('Where is the ice?', 12), ask('Name a rock.', 9)];
let server: DemoServer;
/** Each request's text alone, from onnxruntime-node on the CPU. */
let nodeTexts: string[];

beforeAll(async () => {
  if (!CHROMIUM) return;
  const dir = await fixtures();
  const engine = createEngine(nodeBackend('cpu'));
  await engine.load([{ id: MODEL, task: 'chat', class: 't', context_length: 2048, source: join(dir, 'tiny-chat'), price: { input_per_1m: 0, output_per_1m: 0 } }]);
  for (let i = 0; i < 200 && (await engine.models())[0]!.status === 'starting'; i++) await new Promise((r) => setTimeout(r, 50));
  const greedy = { temperature: 0, top_p: 1, top_k: -1, min_p: 0, presence_penalty: 0, frequency_penalty: 0, stop: [], stop_token_ids: [], ignore_eos: false, logprobs: -1 };
  nodeTexts = [];
  for (const [i, b] of [LONG, ...SHORT].entries()) {
    const req = { id: `n${i}`, model: MODEL, prompt: { messages: b.messages }, sampling: { ...greedy, max_tokens: b.max_tokens } };
    nodeTexts.push((await engine.generate(req, () => undefined)).text);
  }
  await engine.dispose();
  server = await startDemo();
}, 180_000);

afterAll(async () => {
  await server?.close();
});

async function stats(page: Page): Promise<ModelStats> {
  const all = (await page.evaluate('window.hearth.then((h) => h.runtime.engine.stats())')) as { models: ModelStats[] };
  return all.models.find((m) => m.id === MODEL)!;
}

/** The long request, then the short ones once it is decoding, so they join its running batch. */
async function staggered(page: Page, info: HearthInfo): Promise<string[]> {
  const steps = (await stats(page)).decode_steps!;
  let settled = false;
  const long = inPage(page, 'post', info, '/v1/chat/completions', LONG).finally(() => (settled = true));
  while (!settled && (await stats(page)).decode_steps! < steps + 2) await new Promise((r) => setTimeout(r, 20));
  const short = SHORT.map((b) => inPage(page, 'post', info, '/v1/chat/completions', b));
  const all = await Promise.all([long, ...short]);
  for (const r of all) expect(r.status, JSON.stringify(r.body)).toBe(200);
  // Every short request ran inside the long one's span: the long one's steps were all there were.
  expect((await stats(page)).decode_steps! - steps).toBe(all[0]!.body.usage.completion_tokens - 1);
  return all.map((r) => r.body.choices[0].message.content as string);
}

suite('the KV cache on WebGPU', () => {
  const browser = freshBrowser();

  it('is repacked on the GPU as requests join and leave the batch: no read back but the prefix cache\'s, and each request keeps Node\'s text', async () => {
    const { page, info } = await openDemo(browser.context, `${server.url}?device=webgpu`);
    expect(info.device).toBe('webgpu');
    const before = await stats(page);
    expect(await staggered(page, info)).toEqual(nodeTexts);
    const after = await stats(page);
    // Joining (after each prefill) and leaving (as each ends) read nothing back for the batch...
    expect(after.kv_device_reads! - after.kv_prefix_cache_reads!).toBe(before.kv_device_reads! - before.kv_prefix_cache_reads!);
    // ...only the prefix cache's entries: a prompt after its prefill, and prompt and reply at the end.
    expect(after.kv_prefix_cache_reads! - before.kv_prefix_cache_reads!).toBe(2 * nodeTexts.length);

    // Again: the prefix cache holds every prompt and reply, so nothing at all leaves the GPU.
    expect(await staggered(page, info)).toEqual(nodeTexts);
    expect((await stats(page)).kv_device_reads).toBe(after.kv_device_reads);
    await page.close();
  }, 300_000);
});
