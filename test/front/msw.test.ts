// hearth/msw as an application's test suite would use it: setupServer, an
// unmodified openai client pointed at a made-up base URL, no network.
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { useHearthMsw } from '../helpers/msw.js';

const baseURL = 'https://api.example.test/v1';
useHearthMsw(baseURL);

const client = (apiKey = `svc_live_${'a1B2'.repeat(8)}`) => new OpenAI({ baseURL, apiKey, maxRetries: 0 });

describe('the MSW handlers with the openai SDK', () => {
  it('answer a chat completion from the real fixture model', async () => {
    const r = await client().chat.completions.create({
      model: 'svc/tiny-chat',
      messages: [{ role: 'user', content: 'Hello there' }],
      temperature: 0,
    });
    expect(r.choices[0].finish_reason).toBe('stop');
    expect(r.choices[0].message.content!.length).toBeGreaterThan(0);
  });

  it('stream chat chunks', async () => {
    const stream = await client().chat.completions.create({
      model: 'svc/tiny-chat',
      messages: [{ role: 'user', content: 'Hello there' }],
      temperature: 0,
      stream: true,
    });
    const deltas: string[] = [];
    for await (const c of stream) deltas.push(c.choices[0]?.delta.content ?? '');
    expect(deltas.join('').length).toBeGreaterThan(0);
  });

  it('embed with the SDK default encoding', async () => {
    const r = await client().embeddings.create({ model: 'svc/tiny-embed', input: 'hello' });
    expect(r.data[0].embedding).toHaveLength(1536);
  });

  it('refuse a key that is not a well-formed svc_live_ key', async () => {
    await expect(client('sk-123').models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  });
});
