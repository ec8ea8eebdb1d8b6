// The bound an upstream request's prompt is held for, read from the request alone, is
// never below the real count: checked against a real chat template and byte-level BPE
// tokenizer (tiny-chat's ChatML), for plain, multilingual, multi-turn and tool-call
// conversations and raw prompts. And it is small: a short message is bounded by its
// bytes and a few tokens, not by the context.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeBackend } from '../../src/backends/node.js';
import { createEngine } from '../../src/engine/engine.js';
import type { ChatMessage, EngineApi } from '../../src/engine/protocol.js';
import { modelsSettled } from '../../src/runtime.js';
import { costShape, MESSAGE_ALLOWANCE } from '../../src/upstream/bounds.js';
import { fixtures } from '../helpers/fixtures.js';

let engine: EngineApi;

beforeAll(async () => {
  const dir = await fixtures();
  engine = createEngine(nodeBackend('cpu'));
  const price = { input_per_1m: 0.1, output_per_1m: 0.4 };
  await engine.load([{ id: 'svc/tiny-chat', task: 'chat', class: 'tiny', context_length: 2048, source: join(dir, 'tiny-chat'), price }]);
  await modelsSettled(engine);
}, 60_000);

afterAll(() => engine?.dispose());

const conversations: ChatMessage[][] = [
  [{ role: 'user', content: 'hi' }],
  [{ role: 'user', content: '' }],
  [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'Où est la mer? 🌊 海はどこ?' }],
  [
    { role: 'user', content: 'What is the weather in Paris?' },
    { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: { city: 'Paris' } } }] },
    { role: 'tool', content: '{"temp": 21}', tool_call_id: 'call_1' },
    { role: 'user', content: 'Thanks!' },
  ],
];

describe('the upstream prompt bound', () => {
  it('is at least the real count of every conversation, and near it', async () => {
    for (const messages of conversations) {
      const [bound] = costShape('chat', { model: 'svc/remote', messages }).prompts;
      const [real] = await engine.countTokens!({ model: 'svc/tiny-chat', prompts: [{ messages }] });
      expect(bound, JSON.stringify(messages)).toBeGreaterThanOrEqual(real!);
      expect(bound! - real!, JSON.stringify(messages)).toBeLessThan(2 * MESSAGE_ALLOWANCE * (messages.length + 1));
    }
  });

  it('is at least the real count of raw prompts; token arrays count as their length', async () => {
    const prompts = ['Once upon a time', 'naïve café — ünïcödé', ''];
    const bounds = costShape('completion', { model: 'svc/remote', prompt: prompts }).prompts;
    const real = await engine.countTokens!({ model: 'svc/tiny-chat', prompts: prompts.map((text) => ({ text: text || ' ' })) });
    bounds.forEach((b, i) => expect(b).toBeGreaterThanOrEqual(real[i]!));
    expect(costShape('generate', { input_ids: [[1, 2, 3], [4]] }).prompts).toEqual([3, 1]);
    expect(costShape('embedding', { input: [5, 6, 7, 8] }).prompts).toEqual([4]);
  });

  it('bounds a short message by its bytes and an allowance a message, not by the context', () => {
    expect(costShape('chat', { messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 })).toEqual({
      prompts: [4 + 2 + MESSAGE_ALLOWANCE + MESSAGE_ALLOWANCE],
      n: 1,
      maxTokens: 4,
    });
  });
});
