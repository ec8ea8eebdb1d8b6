// hearth/msw with a base URL that is an origin alone (Anthropic's or Cohere's default): its path
// is '/', so the routes sit at the root, as they sit under /v1 for https://api.openai.com/v1.
import { setupServer } from 'msw/node';
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { hearthHandlers, type HearthHandlers } from '../../src/front/msw/index.js';

let handlers: HearthHandlers;
let server: ReturnType<typeof setupServer>;

beforeAll(async () => {
  handlers = await hearthHandlers({ baseURL: 'https://api.anthropic.com', models: ['svc/tiny-chat'] });
  server = setupServer(...handlers);
  server.listen({
    onUnhandledFrame({ frame }) {
      frame.errorWith(new Error('unhandled'));
    },
  });
}, 120_000);

afterAll(async () => {
  server?.close();
  await handlers?.close();
});

it('answers the routes at the origin’s root when the base URL is an origin alone', async () => {
  const sdk = new OpenAI({ baseURL: 'https://api.anthropic.com', apiKey: `svc_live_${'a1B2'.repeat(8)}`, maxRetries: 0 });
  const r = await sdk.chat.completions.create({ model: 'svc/tiny-chat', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 4, temperature: 0 });
  expect(r.usage!.completion_tokens).toBeGreaterThan(0);
  expect((await sdk.models.list()).data.map((m) => m.id)).toEqual(['svc/tiny-chat']);
});
