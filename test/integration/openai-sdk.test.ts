// The real server (the CLI, a real HTTP listener, the engine in a worker thread,
// the fixture models) driven by the official openai SDK, as a user would.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openapiAvailable, validateAgainst } from '../helpers/openapi.js';
import { startSdkServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
let client: OpenAI;
let key: string;

const chat = (content: string, extra: Partial<OpenAI.ChatCompletionCreateParamsNonStreaming> = {}) =>
  client.chat.completions.create({ model: 'svc/tiny-chat', messages: [{ role: 'user', content }], temperature: 0, ...extra });

beforeAll(async () => {
  ({ server, key, client } = await startSdkServer('hearth-sdk-'));
}, 120_000);

afterAll(async () => {
  expect(await server?.stop()).toBe(0);
});

function expectValid(schema: string, body: unknown) {
  if (openapiAvailable) expect(validateAgainst(schema, body)).toEqual([]);
}

describe('the openai SDK against a real server', () => {
  it('lists the fixture models', async () => {
    const page = await client.models.list();
    const ids = page.data.map((m) => m.id);
    expect(ids).toEqual(expect.arrayContaining(['svc/tiny-chat', 'svc/tiny-embed']));
    const one = await client.models.retrieve('svc/tiny-chat');
    expect(one).toMatchObject({ id: 'svc/tiny-chat', object: 'model', status: 'ready', task: 'chat', input_modalities: ['text'] });
  });

  it('refuses an image part for a text-only model with a BadRequestError naming the part', async () => {
    const err = await client.chat.completions
      .create({
        model: 'svc/tiny-chat',
        messages: [{ role: 'user', content: [{ type: 'text', text: 'What is in it?' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }] }],
      })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.param).toBe('messages[0].content[1]');
    expect(err.message).toMatch(/takes no images/);
  });

  it('gets a greedy chat reply that ends with stop, the same every time', async () => {
    const a = await chat('Tell me about the sea.');
    const b = await chat('Tell me about the sea.');
    expectValid('CreateChatCompletionResponse', a);
    expect(a.choices[0].message.content!.length).toBeGreaterThan(0);
    expect(a.choices[0].finish_reason).toBe('stop');
    expect(b.choices[0].message.content).toBe(a.choices[0].message.content);
    expect(a.usage!.completion_tokens).toBeGreaterThan(0);
    expect(a.usage!.total_tokens).toBe(a.usage!.prompt_tokens + a.usage!.completion_tokens);
  });

  it('answers different prompts differently', async () => {
    const replies = await Promise.all(['Hello there', 'What is rust?', 'Write a poem'].map((p) => chat(p)));
    expect(new Set(replies.map((r) => r.choices[0].message.content)).size).toBeGreaterThan(1);
  });

  it('streams the same text it returns without streaming, with usage last', async () => {
    const whole = await chat('Describe a mountain.');
    const stream = await client.chat.completions.create({
      model: 'svc/tiny-chat',
      messages: [{ role: 'user', content: 'Describe a mountain.' }],
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    for (const c of chunks) expectValid('CreateChatCompletionStreamResponse', c);
    expect(chunks[0].choices[0].delta).toMatchObject({ role: 'assistant', content: '' });
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    expect(text).toBe(whole.choices[0].message.content);
    // One chunk per token as it is produced (the final EOS token has no text).
    expect(chunks.filter((c) => c.choices[0]?.delta.content).length).toBe(whole.usage!.completion_tokens - 1);
    expect(chunks.at(-2)!.choices[0].finish_reason).toBe('stop');
    expect(chunks.at(-1)!.choices).toEqual([]);
    const usage = chunks.at(-1)!.usage!;
    expect({ ...usage, prompt_tokens_details: undefined }).toEqual({ ...whole.usage, prompt_tokens_details: undefined });
    // The same prompt ran just before: all of it but the last token comes from the prefix cache.
    expect(usage.prompt_tokens_details!.cached_tokens).toBe(usage.prompt_tokens - 1);
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
  });

  it('stops at max_tokens with finish_reason length', async () => {
    const r = await chat('Tell me a long story.', { max_tokens: 2 });
    expect(r.choices[0].finish_reason).toBe('length');
    expect(r.usage!.completion_tokens).toBe(2);
  });

  it('reproduces a sampled reply from the same seed and varies across seeds', async () => {
    const sample = (seed: number) => chat('Say something.', { temperature: 1.8, seed, max_tokens: 24 });
    const [a, b] = await Promise.all([sample(1), sample(1)]);
    expect(b.choices[0].message.content).toBe(a.choices[0].message.content);
    const others = await Promise.all([2, 3, 4, 5, 6].map(sample));
    const texts = new Set([a, ...others].map((r) => r.choices[0].message.content));
    expect(texts.size).toBeGreaterThan(1);
  });

  it('gives 8 simultaneous streams exactly the text each gets alone', async () => {
    const prompts = Array.from({ length: 8 }, (_, i) => `Question number ${i}: what is ${['fire', 'ice', 'wind', 'rock', 'sand', 'rain', 'snow', 'mud'][i]}?`);
    const alone: string[] = [];
    for (const p of prompts) alone.push((await chat(p)).choices[0].message.content!);
    const together = await Promise.all(
      prompts.map(async (p) => {
        const stream = await client.chat.completions.create({
          model: 'svc/tiny-chat',
          messages: [{ role: 'user', content: p }],
          temperature: 0,
          stream: true,
        });
        let text = '';
        for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
        return text;
      }),
    );
    expect(together).toEqual(alone);
  });

  it('completes raw text, echoing the prompt when asked', async () => {
    const r = await client.completions.create({ model: 'svc/tiny-chat', prompt: 'Once upon a time', temperature: 0, max_tokens: 8 });
    expectValid('CreateCompletionResponse', r);
    expect(r.choices[0].text.length).toBeGreaterThan(0);
    const e = await client.completions.create({ model: 'svc/tiny-chat', prompt: 'Once upon a time', temperature: 0, max_tokens: 8, echo: true });
    expect(e.choices[0].text).toBe(`Once upon a time${r.choices[0].text}`);
  });

  it('embeds with the SDK default (base64) into unit vectors of 1536 dimensions', async () => {
    const r = await client.embeddings.create({ model: 'svc/tiny-embed', input: ['The cat sat on the mat', 'A cat was sitting', 'Stock market prices fell'] });
    expectValid('CreateEmbeddingResponse', r);
    const [a, b, c] = r.data.map((d) => d.embedding);
    expect(a).toHaveLength(1536);
    const dot = (x: number[], y: number[]) => x.reduce((s, v, i) => s + v * y[i], 0);
    expect(dot(a, a)).toBeCloseTo(1, 4);
    expect(dot(a, b)).toBeGreaterThan(dot(a, c));
    const small = await client.embeddings.create({ model: 'svc/tiny-embed', input: 'The cat sat on the mat', dimensions: 256, encoding_format: 'float' });
    expect(small.data[0].embedding).toHaveLength(256);
    expect(dot(small.data[0].embedding, small.data[0].embedding)).toBeCloseTo(1, 4);
  });

  it('raises the SDK error classes for bad input', async () => {
    const bad = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'svc_live_notarealkeynotarealkeynotarealkey12', maxRetries: 0 });
    await expect(bad.models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    await expect(chat('hi', { model: 'svc/nope' })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const err = await chat('hi', { temperature: 5 }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.param).toBe('temperature');
    const long = await chat('hi', { max_tokens: 100_000 }).catch((e) => e);
    expect(long).toBeInstanceOf(OpenAI.BadRequestError);
    expect(long.code).toBe('context_length_exceeded');
  });

  it('serves /generate with logprobs through plain fetch', async () => {
    const res = await fetch(`${server.url}/generate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'Once upon a time', sampling_params: { max_new_tokens: 6, temperature: 0 }, return_logprob: true }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { text: string[]; meta_info: { completion_tokens: number; output_token_logprobs: unknown[] } };
    expect(body.text).toHaveLength(1);
    expect(body.meta_info.output_token_logprobs).toHaveLength(body.meta_info.completion_tokens);
  });
});
