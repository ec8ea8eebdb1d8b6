// /tokenize and /detokenize on a real `hearth serve`, over HTTP with raw fetch: a count is the
// prompt_tokens that /v1/chat/completions, /v1/completions and /v1/embeddings report for the
// same input (the chat template applied as chat applies it), and /detokenize gives back the
// prompt the template wrote.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtures } from '../helpers/fixtures.js';
import { createKey, startServer, waitReady, type TestServer } from '../helpers/server.js';

let server: TestServer;
let key: string;

beforeAll(async () => {
  await fixtures();
  server = await startServer(['--models', 'svc/tiny-chat,svc/tiny-embed']);
  key = await createKey(server.dataDir);
  await waitReady(server.url);
}, 120_000);

afterAll(async () => {
  expect(await server?.stop()).toBe(0);
});

async function post(path: string, body: unknown): Promise<Record<string, any>> {
  const res = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as Record<string, any>;
  expect(res.status, JSON.stringify(json)).toBe(200);
  return json;
}

const CHATS = [
  [{ role: 'user', content: 'Hello!' }],
  [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: [{ type: 'text', text: 'Où est ' }, { type: 'text', text: 'la mer? 🌊' }] },
  ],
  [
    { role: 'user', content: 'hi' },
    { role: 'assistant', content: 'Hello!', reasoning: 'A greeting.' },
    { role: 'user', content: 'Tell me more.' },
  ],
];
const TOOLS = [{ type: 'function', function: { name: 'get_weather', description: 'The weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];

describe('/tokenize counts as the generating routes charge', () => {
  it('counts messages as /v1/chat/completions reports prompt_tokens, with and without tools', async () => {
    const counts: number[] = [];
    for (const [messages, extra] of [...CHATS.map((m) => [m, {}] as const), [CHATS[0]!, { tools: TOOLS }] as const]) {
      const tokenized = await post('/tokenize', { model: 'svc/tiny-chat', messages, ...extra });
      const chat = await post('/v1/chat/completions', { model: 'svc/tiny-chat', messages, max_tokens: 1, temperature: 0, ...extra });
      expect(tokenized).toEqual({ count: chat.usage.prompt_tokens, max_model_len: 2048, tokens: expect.any(Array) });
      expect(tokenized.tokens).toHaveLength(tokenized.count);
      counts.push(tokenized.count);
    }
    // The tools reach the template (tiny-chat's takes none: they go into a system prompt).
    expect(counts.at(-1)).toBeGreaterThan(counts[0]!);
  }, 60_000);

  it('counts a prompt as /v1/completions reports prompt_tokens', async () => {
    for (const prompt of ['Once upon a time', 'Où est la mer? 🌊\n\tend', '<|im_start|>user\nhi<|im_end|>']) {
      const tokenized = await post('/tokenize', { model: 'svc/tiny-chat', prompt });
      const completion = await post('/v1/completions', { model: 'svc/tiny-chat', prompt, max_tokens: 1, temperature: 0 });
      expect(tokenized.count).toBe(completion.usage.prompt_tokens);
    }
  }, 60_000);

  it("counts an embedding model's input as /v1/embeddings reports prompt_tokens", async () => {
    const input = 'a much longer sentence about the sea and the sky';
    const tokenized = await post('/tokenize', { model: 'svc/tiny-embed', prompt: input });
    const embedded = await post('/v1/embeddings', { model: 'svc/tiny-embed', input, encoding_format: 'float' });
    expect(tokenized).toMatchObject({ count: embedded.usage.prompt_tokens, max_model_len: 512 });
  });

  it('leaves the generation prompt out when add_generation_prompt is false', async () => {
    const messages = CHATS[0];
    const full = await post('/tokenize', { model: 'svc/tiny-chat', messages });
    const open = await post('/tokenize', { model: 'svc/tiny-chat', messages, add_generation_prompt: false });
    expect(open.count).toBeLessThan(full.count);
    expect(full.tokens.slice(0, open.count)).toEqual(open.tokens);
  });
});

describe('/detokenize', () => {
  it('gives back the prompt the chat template wrote, and text as it was', async () => {
    const { tokens } = await post('/tokenize', { model: 'svc/tiny-chat', messages: CHATS[1] });
    expect(await post('/detokenize', { model: 'svc/tiny-chat', tokens })).toEqual({
      prompt: '<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nOù est la mer? 🌊<|im_end|>\n<|im_start|>assistant\n',
    });
    const text = 'Héllo wörld, 東京 🙂';
    const encoded = await post('/tokenize', { model: 'svc/tiny-chat', prompt: text, return_token_strs: true });
    expect(encoded.token_strs).toHaveLength(encoded.count);
    expect(await post('/detokenize', { model: 'svc/tiny-chat', tokens: encoded.tokens })).toEqual({ prompt: text });
  });
});
