// The official openai SDK talking to the router in-process (its fetch is the
// router's), over the stub engine: the SDK's parsing, decoding and retry rules
// are what users will meet.
import OpenAI from 'openai';
import { describe, expect, test } from 'vitest';
import { setup } from './harness.js';
import { GOOD_KEY } from './stub-access.js';
import { EMBED_DIMS } from './stub-engine.js';

function client(s: ReturnType<typeof setup>, apiKey = GOOD_KEY) {
  return new OpenAI({
    apiKey,
    baseURL: 'http://hearth.test/v1',
    maxRetries: 2,
    fetch: async (url: string | URL | Request, init?: RequestInit) => s.app.fetch(new Request(url, init)),
  });
}

describe('the openai SDK against the router over the stub engine', () => {
  test('creates a chat completion', async () => {
    const s = setup();
    const r = await client(s).chat.completions.create({ model: 'svc/tiny-chat', messages: [{ role: 'user', content: 'hi' }] });
    expect(r.choices[0]!.message.content).toBe('Hello world!');
  });

  test('streams a chat completion with usage', async () => {
    const s = setup();
    const stream = await client(s).chat.completions.create({
      model: 'svc/tiny-chat',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('Hello world!');
    expect(usage?.completion_tokens).toBe(3);
  });

  test('decodes the default base64 embeddings into the float vectors', async () => {
    const s = setup();
    const sdk = client(s);
    const b64 = await sdk.embeddings.create({ model: 'svc/tiny-embed', input: 'x' });
    const floats = await sdk.embeddings.create({ model: 'svc/tiny-embed', input: 'x', encoding_format: 'float' });
    expect(b64.data[0]!.embedding).toHaveLength(EMBED_DIMS);
    b64.data[0]!.embedding.forEach((x, i) => expect(x).toBe(Math.fround(floats.data[0]!.embedding[i]!)));
  });

  test('retrieves a model whose id has a slash', async () => {
    const s = setup();
    const m = await client(s).models.retrieve('svc/tiny-chat');
    expect(m.id).toBe('svc/tiny-chat');
  });

  test('throws the SDK\'s typed errors with our codes', async () => {
    const s = setup();
    await expect(client(s, 'svc_live_wrong').models.list()).rejects.toMatchObject({ status: 401, code: 'invalid_api_key' });
    await expect(
      client(s).chat.completions.create({ model: 'svc/nope', messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  test('does not retry a spending-cap 429 (x-should-retry: false)', async () => {
    const s = setup();
    s.access.overQuota = true;
    await expect(
      client(s).chat.completions.create({ model: 'svc/tiny-chat', messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toMatchObject({ status: 429, code: 'insufficient_quota' });
    expect(s.access.used).toBe(1);
  });

  test('throws when a stream carries an error event', async () => {
    const s = setup();
    s.engine.script = () => ({ failAfter: 1 });
    const stream = await client(s).chat.completions.create({ model: 'svc/tiny-chat', messages: [{ role: 'user', content: 'x' }], stream: true });
    await expect(async () => {
      for await (const _ of stream) void _;
    }).rejects.toThrow(/status/);
  });
});
