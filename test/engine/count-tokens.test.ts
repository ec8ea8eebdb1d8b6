// countTokens counts a prompt exactly as generate and embed will: the chat template
// applied, the model's own tokenizer. Admission holds a request's cost on this count, so
// it must match the prompt_tokens the engine reports (and charges) for the same prompt.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeBackend } from '../../src/backends/node.js';
import { createEngine } from '../../src/engine/engine.js';
import type { EngineApi, PromptInput, SamplingParams } from '../../src/engine/protocol.js';
import { modelsSettled } from '../../src/runtime.js';
import { fixtures } from '../helpers/fixtures.js';

let engine: EngineApi;
const price = { input_per_1m: 0.1, output_per_1m: 0.4 };
const oneToken: SamplingParams = {
  max_tokens: 1, temperature: 0, top_p: 1, top_k: -1, min_p: 0, presence_penalty: 0, frequency_penalty: 0,
  stop: [], stop_token_ids: [], ignore_eos: false, logprobs: -1,
};

beforeAll(async () => {
  const dir = await fixtures();
  engine = createEngine(nodeBackend('cpu'));
  await engine.load([
    { id: 'svc/tiny-chat', task: 'chat', class: 'tiny', context_length: 2048, source: join(dir, 'tiny-chat'), price },
    { id: 'svc/tiny-embed', task: 'embedding', class: 'tiny', context_length: 512, source: join(dir, 'tiny-embed'), price },
  ]);
  await modelsSettled(engine);
}, 60_000);

afterAll(() => engine?.dispose());

describe('countTokens', () => {
  it('counts chat, text and token prompts as generate reports them', async () => {
    const prompts: PromptInput[] = [
      { messages: [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'Où est la mer? 🌊' }] },
      { messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'Hello!' }, { role: 'user', content: 'Tell me more.' }] },
      { text: 'Once upon a time' },
      { tokens: [72, 101, 97, 114, 116, 104] },
    ];
    const counted = await engine.countTokens!({ model: 'svc/tiny-chat', prompts });
    const reported = await Promise.all(
      prompts.map((prompt, i) => engine.generate({ id: `count-${i}`, model: 'svc/tiny-chat', prompt, sampling: oneToken }, () => {}).then((r) => r.prompt_tokens)),
    );
    expect(counted).toEqual(reported);
    // The template adds tokens of its own: more than the message texts alone.
    expect(counted[0]).toBeGreaterThan((await engine.countTokens!({ model: 'svc/tiny-chat', prompts: [{ text: 'You are terse.Où est la mer? 🌊' }] }))[0]!);
  });

  it('counts embedding inputs as embed reports them', async () => {
    const input = ['the sea', 'a much longer sentence about the sea and the sky'];
    const counted = await engine.countTokens!({ model: 'svc/tiny-embed', prompts: input.map((text) => ({ text })) });
    expect(counted.reduce((a, b) => a + b, 0)).toBe((await engine.embed({ model: 'svc/tiny-embed', input })).prompt_tokens);
  });

  it('refuses an unknown model as generate does', async () => {
    await expect(engine.countTokens!({ model: 'svc/none', prompts: [{ text: 'x' }] })).rejects.toMatchObject({ code: 'model_not_found' });
  });
});
