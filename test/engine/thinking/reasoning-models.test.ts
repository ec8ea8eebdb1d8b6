// Reasoning models in the engine, on the designed fixtures (real Qwen3 tokenizer and templates):
// recognised from their files or a catalog entry; every token from the ONNX graph, the same
// greedy tokens as transformers.js; each reply reports where it started and how many of its
// tokens were thinking.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { THINKING_REPLY } from '../../../models/exports/thinking.js';
import { nodeBackend } from '../../../src/backends/node.js';
import { createEngine } from '../../../src/engine/engine.js';
import type { CatalogEntry, ChatMessage, EngineApi, GenerateResult, SamplingParams, TokenEvent } from '../../../src/engine/protocol.js';
import { exportFixtures, referenceGreedy } from '../../helpers/exports.js';
import { fixtures } from '../../helpers/fixtures.js';

const greedy: SamplingParams = {
  max_tokens: 64, temperature: 0, top_p: 1, top_k: -1, min_p: 0, presence_penalty: 0, frequency_penalty: 0,
  stop: [], stop_token_ids: [], ignore_eos: false, logprobs: -1,
};
const HELLO: ChatMessage[] = [{ role: 'user', content: 'Hello there' }];
const price = { input_per_1m: 0, output_per_1m: 0 };
let engine: EngineApi;
let n = 0;

const entry = (id: string, source: string, extra: Partial<CatalogEntry> = {}): CatalogEntry => ({ id, task: 'chat', class: 't', context_length: 4096, source, price, ...extra });

async function run(model: string, opts: { kwargs?: Record<string, unknown>; sampling?: Partial<SamplingParams>; messages?: ChatMessage[] } = {}): Promise<GenerateResult & { first: TokenEvent }> {
  const events: TokenEvent[] = [];
  const prompt = { messages: opts.messages ?? HELLO, template_kwargs: opts.kwargs };
  const r = await engine.generate({ id: `t${n++}`, model, prompt, sampling: { ...greedy, ...opts.sampling } }, (ev) => events.push(ev));
  return { ...r, first: events[0]! };
}

beforeAll(async () => {
  const dir = await exportFixtures();
  const tiny = join(await fixtures(), 'tiny-chat');
  engine = createEngine(nodeBackend('cpu'), { kvCacheMb: 0 });
  await engine.load([
    entry('svc/think', join(dir, 'qwen3-think-export')),
    entry('svc/think-open', join(dir, 'qwen3-think-open-export')),
    entry('svc/qwen3', join(dir, 'qwen3-export')),
    entry('svc/smollm3', join(dir, 'smollm3-export')),
    entry('svc/tiny', tiny),
    entry('svc/think-off', join(dir, 'qwen3-think-export'), { reasoning: 'none' }),
    entry('svc/tiny-on', tiny, { reasoning: 'think' }),
  ]);
  for (let i = 0; i < 600 && (await engine.models()).some((m) => m.status === 'starting'); i++) await new Promise((r) => setTimeout(r, 50));
  expect((await engine.models()).filter((m) => m.status !== 'ready').map((m) => `${m.id}: ${m.detail}`)).toEqual([]);
}, 120_000);
afterAll(() => engine?.dispose());

describe('reasoning models in the engine', () => {
  it('are recognised from think tags that are tokens and a template that writes them, or from the catalog', async () => {
    const reasoning = Object.fromEntries((await engine.models()).map((m) => [m.id, m.reasoning ?? null]));
    expect(reasoning).toEqual({
      'svc/think': 'think',
      'svc/think-open': 'think',
      'svc/qwen3': 'think', // Qwen3's own files: a reasoning model, whatever its random weights write
      'svc/smollm3': null, // its template writes <think>, but the stand-in vocabulary has no such token
      'svc/tiny': null,
      'svc/think-off': null,
      'svc/tiny-on': 'think',
    });
  });

  it("give transformers.js's greedy tokens: the designed think block, answer and EOS", async () => {
    for (const name of ['qwen3-think-export', 'qwen3-think-open-export']) {
      const [expected] = await referenceGreedy(name, 'fp32', [HELLO], 40);
      const r = await run(name === 'qwen3-think-export' ? 'svc/think' : 'svc/think-open');
      expect(r.token_ids).toEqual(expected);
      expect(r.finish_reason).toBe('stop');
    }
  }, 60_000);

  it('report a block the reply opens: free start, the thinking tokens with both tags', async () => {
    const r = await run('svc/think');
    expect(r.text).toBe(`<think>${THINKING_REPLY.thinking}</think>\n\n${THINKING_REPLY.answer}`);
    expect(r.thinking).toBe('free');
    expect(r.first.thinking).toBe('free');
    expect(r.reasoning_tokens).toBe(r.token_ids.indexOf(151668) + 1);
    expect(r.reasoning_tokens).toBe(15);
  });

  it('report a block the prompt opened: the reply starts inside it and holds only its close tag', async () => {
    const r = await run('svc/think-open');
    expect(r.prompt_text.endsWith('<|im_start|>assistant\n<think>\n')).toBe(true);
    expect(r.text).toBe(`${THINKING_REPLY.thinking}</think>\n\n${THINKING_REPLY.answer}`);
    expect([r.thinking, r.first.thinking, r.reasoning_tokens]).toEqual(['inside', 'inside', 14]);
  });

  it('answer at once with no thinking when the template switches it off', async () => {
    const r = await run('svc/think', { kwargs: { enable_thinking: false } });
    expect(r.text).toBe(THINKING_REPLY.answer);
    expect([r.thinking, r.reasoning_tokens]).toEqual(['after', 0]);
  });

  it('count every token of a reply cut inside its thinking', async () => {
    const r = await run('svc/think', { sampling: { max_tokens: 6 } });
    expect([r.finish_reason, r.completion_tokens, r.reasoning_tokens]).toEqual(['length', 6, 6]);
  });

  it('leave replies of models that do not reason as they were: no thinking fields', async () => {
    for (const model of ['svc/tiny', 'svc/think-off']) {
      const r = await run(model);
      expect('thinking' in r || 'reasoning_tokens' in r || 'thinking' in r.first).toBe(false);
    }
    expect((await run('svc/think-off')).text).toContain('<think>'); // raw, as the model wrote it
  });
});
