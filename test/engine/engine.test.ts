// The engine in-process (no worker, no HTTP) on the real fixture models.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { nodeBackend } from '../../src/backends/node.js';
import { createEngine } from '../../src/engine/engine.js';
import type { EngineApi, GenerateRequest, SamplingParams, TokenEvent } from '../../src/engine/protocol.js';
import { fixtures } from '../helpers/fixtures.js';

let engine: EngineApi;

const greedy: SamplingParams = {
  temperature: 0, top_p: 1, top_k: -1, min_p: 0, presence_penalty: 0, frequency_penalty: 0,
  stop: [], stop_token_ids: [], ignore_eos: false, logprobs: -1,
};
let n = 0;
const req = (content: string, sampling: Partial<SamplingParams> = {}): GenerateRequest => ({
  id: `r${n++}`,
  model: 'svc/tiny-chat',
  prompt: { messages: [{ role: 'user', content }] },
  sampling: { ...greedy, ...sampling },
});

async function generate(r: GenerateRequest) {
  const events: TokenEvent[] = [];
  const result = await engine.generate(r, (e) => events.push(e));
  return { result, events, streamed: events.map((e) => e.text).join('') };
}

beforeAll(async () => {
  const dir = await fixtures();
  engine = createEngine(nodeBackend('cpu'));
  const price = { input_per_1m: 0.1, output_per_1m: 0.4 };
  await engine.load([
    { id: 'svc/tiny-chat', task: 'chat', class: 'tiny', context_length: 2048, source: join(dir, 'tiny-chat'), price },
    { id: 'svc/tiny-embed', task: 'embedding', class: 'tiny', context_length: 512, source: join(dir, 'tiny-embed'), price },
  ]);
  for (let i = 0; i < 200 && (await engine.models()).some((m) => m.status === 'starting'); i++) {
    await new Promise((r) => setTimeout(r, 50));
  }
  expect((await engine.models()).map((m) => m.status)).toEqual(['ready', 'ready']);
}, 60_000);

afterAll(() => engine?.dispose());

describe('the engine on the fixture model', () => {
  it('streams exactly the text it returns, ending at EOS', async () => {
    const { result, streamed } = await generate(req('Tell me about the sea.'));
    expect(result.finish_reason).toBe('stop');
    expect(result.text.length).toBeGreaterThan(0);
    expect(streamed).toBe(result.text);
    expect(result.prompt_text).toContain('<|im_start|>assistant\n');
  });

  it('gives each of 8 concurrent sequences the text it gets alone', async () => {
    const prompts = ['fire', 'ice', 'wind', 'rock', 'sand', 'rain', 'snow', 'mud'].map((w) => `What is ${w}?`);
    const alone = [];
    for (const p of prompts) alone.push((await generate(req(p))).result.text);
    const together = await Promise.all(prompts.map((p) => generate(req(p))));
    expect(together.map((t) => t.result.text)).toEqual(alone);
    expect(together.map((t) => t.streamed)).toEqual(alone);
  });

  it('trims a stop string and reports it as matched', async () => {
    const full = (await generate(req('Tell me about the sea.'))).result.text;
    const stop = full.slice(3, 5);
    const { result, streamed } = await generate(req('Tell me about the sea.', { stop: [stop] }));
    expect(result.finish_reason).toBe('stop');
    expect(result.matched_stop).toBe(stop);
    expect(result.text).toBe(full.slice(0, full.indexOf(stop)));
    expect(streamed).toBe(result.text);
  });

  it('stops at max_tokens with finish_reason length', async () => {
    const { result } = await generate(req('Tell me about the sea.', { max_tokens: 3 }));
    expect(result).toMatchObject({ finish_reason: 'length', completion_tokens: 3 });
  });

  it('refuses a prompt plus max_tokens over the context length', async () => {
    await expect(generate(req('hi', { max_tokens: 5000 }))).rejects.toMatchObject({ code: 'context_length_exceeded', param: 'messages' });
  });

  it('ends a cancelled sequence with a cancelled error', async () => {
    const r = req('Tell me about the sea.', { ignore_eos: true, max_tokens: 1000 });
    const run = generate(r);
    await new Promise((res) => setTimeout(res, 20));
    await engine.cancel(r.id);
    await expect(run).rejects.toMatchObject({ code: 'cancelled' });
  });

  it('reports logprobs for every generated token', async () => {
    const { result } = await generate(req('Tell me about the sea.', { logprobs: 2 }));
    expect(result.logprobs).toHaveLength(result.completion_tokens);
    for (const lp of result.logprobs!) {
      expect(lp.top).toHaveLength(2);
      expect(lp.top[0].token_id).toBe(lp.token_id); // greedy picks the best
      expect(lp.logprob).toBeLessThanOrEqual(0);
    }
  });

  it('names unknown models and wrong tasks', async () => {
    await expect(generate({ ...req('hi'), model: 'svc/none' })).rejects.toMatchObject({ code: 'model_not_found' });
    await expect(generate({ ...req('hi'), model: 'svc/tiny-embed' })).rejects.toMatchObject({ code: 'unsupported_task' });
  });

  it('embeds into unit vectors', async () => {
    const { data, prompt_tokens } = await engine.embed({ model: 'svc/tiny-embed', input: ['a cat', 'the cats'] });
    expect(data).toHaveLength(2);
    expect(prompt_tokens).toBeGreaterThan(0);
    const norm = Math.hypot(...data[0]);
    expect(norm).toBeCloseTo(1, 5);
  });
});
