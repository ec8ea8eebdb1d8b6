// The engine behind its worker thread, as the Node server uses it.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNodeEngine, type NodeEngine } from '../../src/engine/client/node.js';
import type { SamplingParams, TokenEvent } from '../../src/engine/protocol.js';
import { modelsSettled } from '../../src/runtime.js';
import { fixtures } from '../helpers/fixtures.js';

let engine: NodeEngine;
const sampling: SamplingParams = {
  temperature: 0, top_p: 1, top_k: -1, min_p: 0, presence_penalty: 0, frequency_penalty: 0,
  stop: [], stop_token_ids: [], ignore_eos: false, logprobs: -1,
};

beforeAll(async () => {
  const dir = await fixtures();
  engine = startNodeEngine();
  const price = { input_per_1m: 0, output_per_1m: 0 };
  await engine.load([{ id: 'svc/tiny-chat', task: 'chat', class: 'tiny', context_length: 2048, source: join(dir, 'tiny-chat'), price }]);
  await modelsSettled(engine);
}, 60_000);

afterAll(() => engine?.terminate());

describe('the engine in a worker thread', () => {
  it('delivers one event per token, all before the result', async () => {
    for (const content of ['Hello!', 'What is snow?', 'Tell me about the sea.']) {
      const events: TokenEvent[] = [];
      const result = await engine.generate(
        { id: content, model: 'svc/tiny-chat', prompt: { messages: [{ role: 'user', content }] }, sampling },
        (ev) => events.push(ev),
      );
      expect(events.flatMap((e) => e.token_ids)).toEqual(result.token_ids);
      expect(events.map((e) => e.text).join('')).toBe(result.text);
    }
  });

  it('gives concurrent generations each its own events, in order, even under one request id', async () => {
    const prompts = ['Hello!', 'What is snow?', 'Tell me about the sea.', 'Why?'];
    const events: TokenEvent[][] = prompts.map(() => []);
    const results = await Promise.all(
      prompts.map((content, i) =>
        engine.generate(
          { id: 'same', model: 'svc/tiny-chat', prompt: { messages: [{ role: 'user', content }] }, sampling: { ...sampling, max_tokens: 24 } },
          (ev) => events[i].push(ev),
        ),
      ),
    );
    results.forEach((result, i) => {
      expect(events[i].flatMap((e) => e.token_ids)).toEqual(result.token_ids);
      expect(events[i].map((e) => e.text).join('')).toBe(result.text);
    });
    expect(new Set(results.map((r) => r.text)).size).toBeGreaterThan(1);
  });

  it('keeps EngineError codes across the worker boundary', async () => {
    await expect(
      engine.generate({ id: 'x', model: 'svc/none', prompt: { text: 'hi' }, sampling }, () => undefined),
    ).rejects.toMatchObject({ name: 'EngineError', code: 'model_not_found', param: 'model' });
  });
});
