// A reasoning model through hearth/msw (the designed Qwen3 fixture served from its folder):
// an application's suite reads the thinking apart from the answer in chat completions, their
// streams and the Responses API, with no network.
import { join } from 'node:path';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { THINKING_REPLY } from '../../models/exports/thinking.js';
import { exportFixtures } from '../helpers/exports.js';
import { useHearthMsw } from '../helpers/msw.js';

const baseURL = 'https://api.example.test/v1';
useHearthMsw(baseURL, { models: async () => [join(await exportFixtures(), 'qwen3-think-export')] });

// Made per test: the openai SDK keeps the fetch it finds when made, and MSW patches fetch in beforeAll.
const sdk = () => new OpenAI({ baseURL, apiKey: `svc_live_${'a1B2'.repeat(8)}`, maxRetries: 0 });
const model = 'svc/qwen3-think-export';
const THINKING = THINKING_REPLY.thinking.trim();
const ANSWER = THINKING_REPLY.answer;
type Reasoned = { reasoning_content?: string | null; reasoning?: string | null };

describe('a reasoning model through the MSW handlers', () => {
  it('answers chat with reasoning_content (and the same as reasoning) apart from content, and streams the thinking first', async () => {
    const r = await sdk().chat.completions.create({ model, messages: [{ role: 'user', content: 'Hello there' }], temperature: 0 });
    const message = r.choices[0]!.message as typeof r.choices[0]['message'] & Reasoned;
    expect([message.reasoning_content, message.reasoning, message.content]).toEqual([THINKING, THINKING, ANSWER]);
    expect(r.usage!.completion_tokens_details?.reasoning_tokens).toBe(15);

    const stream = await sdk().chat.completions.create({ model, messages: [{ role: 'user', content: 'Hello there' }], temperature: 0, stream: true });
    let thought = '';
    let said = '';
    for await (const chunk of stream) {
      const d = chunk.choices[0]?.delta as (OpenAI.ChatCompletionChunk.Choice.Delta & Reasoned) | undefined;
      if (d?.reasoning_content) expect(said).toBe('');
      expect(d?.reasoning).toBe(d?.reasoning_content);
      thought += d?.reasoning_content ?? '';
      said += d?.content ?? '';
    }
    expect([thought.trim(), said]).toEqual([THINKING, ANSWER]);
  });

  it('gives a reasoning item before the message through the Responses API', async () => {
    const r = await sdk().responses.create({ model, input: 'Hello there', temperature: 0 });
    expect(r.output.map((i) => i.type)).toEqual(['reasoning', 'message']);
    expect(r.output_text).toBe(ANSWER);
  });
});
