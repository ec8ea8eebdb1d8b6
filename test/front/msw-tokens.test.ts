// /tokenize and /detokenize through hearth/msw, beside the base URL as vLLM serves them beside
// /v1: counts equal the prompt_tokens an unmodified openai client is charged for the same chat
// and completion, /detokenize gives the rendered prompt back, and refusals are the envelope.
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { useHearthMsw } from '../helpers/msw.js';

const baseURL = 'https://api.example.test/v1';
useHearthMsw(baseURL, { models: async () => ['svc/tiny-chat', 'svc/tiny-embed'] });

const apiKey = `svc_live_${'a1B2'.repeat(8)}`;
// Made in each test: the SDK takes the fetch there is when it is made, and MSW's comes with the suite's setup.
const client = () => new OpenAI({ baseURL, apiKey, maxRetries: 0 });

const post = async (path: string, body: unknown, key = apiKey) => {
  const res = await fetch(`https://api.example.test${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
};

const messages: OpenAI.ChatCompletionMessageParam[] = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'Où est la mer? 🌊' },
];

describe('tokens through the MSW handlers', () => {
  it("count messages as the openai SDK's chat completion is charged for them", async () => {
    const chat = await client().chat.completions.create({ model: 'svc/tiny-chat', messages, max_tokens: 1, temperature: 0 });
    const { status, body } = await post('/tokenize', { model: 'svc/tiny-chat', messages });
    expect(status).toBe(200);
    expect(body).toEqual({ count: chat.usage!.prompt_tokens, max_model_len: 2048, tokens: expect.any(Array) });
  });

  it("count a prompt as the openai SDK's completion is charged for it", async () => {
    const prompt = 'Once upon a time, 東京';
    const completion = await client().completions.create({ model: 'svc/tiny-chat', prompt, max_tokens: 1, temperature: 0 });
    expect((await post('/tokenize', { model: 'svc/tiny-chat', prompt })).body.count).toBe(completion.usage!.prompt_tokens);
  });

  it('give back the prompt the template wrote', async () => {
    const { tokens } = (await post('/tokenize', { model: 'svc/tiny-chat', messages })).body;
    expect((await post('/detokenize', { model: 'svc/tiny-chat', tokens })).body).toEqual({
      prompt: '<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nOù est la mer? 🌊<|im_end|>\n<|im_start|>assistant\n',
    });
  });

  it('refuse what they cannot serve in the error envelope', async () => {
    const cases = [
      ['/tokenize', { model: 'svc/nope', prompt: 'x' }, 404, 'model'],
      ['/tokenize', { model: 'svc/tiny-embed', messages: [{ role: 'user', content: 'hi' }] }, 400, 'messages'],
      ['/detokenize', { model: 'svc/tiny-chat', tokens: [1_000_000] }, 400, 'tokens'],
    ] as const;
    for (const [path, body, status, param] of cases) {
      const r = await post(path, body);
      expect([r.status, r.body.error?.param]).toEqual([status, param]);
    }
    expect((await post('/tokenize', { model: 'svc/tiny-chat', prompt: 'x' }, 'sk-123')).status).toBe(401);
  });
});
