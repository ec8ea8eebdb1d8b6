// An application's own test suite, as its authors would write it: their OpenAI client
// code against hearth/msw's handlers in msw 3's setupServer, with no network.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { embed, generateText } from 'ai';
import { hearthHandlers } from 'hearth/msw';
import { setupServer } from 'msw/node';
import OpenAI from 'openai';

const baseURL = 'https://api.example.test/v1';
const apiKey = `svc_live_${'a1B2'.repeat(8)}`;
const messages = [{ role: 'user', content: 'Hello!' }];
const seen = {};
const unhandled = [];

let handlers;
let server;
before(async () => {
  handlers = await hearthHandlers({ baseURL });
  server = setupServer(...handlers);
  // The app's safety net: anything no handler matches is refused, and noted.
  server.listen({
    onUnhandledFrame({ frame, defaults }) {
      if (frame.data.request) unhandled.push(`${frame.data.request.method} ${frame.data.request.url}`);
      defaults.error();
    },
  });
});
after(async () => {
  server.close();
  await handlers.close();
  if (process.env.APP_RESULTS) writeFileSync(process.env.APP_RESULTS, JSON.stringify(seen));
});

test('the openai SDK gets a chat completion from the tiny model', async () => {
  const client = new OpenAI({ baseURL, apiKey });
  const r = await client.chat.completions.create({ model: 'svc/tiny-chat', messages, temperature: 0, max_tokens: 16 });
  assert.equal(r.object, 'chat.completion');
  assert.ok(r.usage.completion_tokens > 0);
  seen.chat = r.choices[0].message.content;
});

test('a stream arrives in chunks and ends with usage', async () => {
  const client = new OpenAI({ baseURL, apiKey });
  const stream = await client.chat.completions.create({
    model: 'svc/tiny-chat', messages, temperature: 0, max_tokens: 16, stream: true, stream_options: { include_usage: true },
  });
  let text = '';
  let chunks = 0;
  let usage;
  for await (const chunk of stream) {
    chunks++;
    text += chunk.choices[0]?.delta?.content ?? '';
    usage = chunk.usage ?? usage;
  }
  assert.ok(chunks > 3);
  assert.ok(usage.completion_tokens > 0);
  seen.stream = text;
});

test('embeddings have 1536 dimensions', async () => {
  const client = new OpenAI({ baseURL, apiKey });
  const r = await client.embeddings.create({ model: 'svc/tiny-embed', input: ['a', 'b'] });
  assert.equal(r.data.length, 2);
  assert.equal(r.data[0].embedding.length, 1536);
});

test('the AI SDK generates text and embeds through the same handlers', async () => {
  const provider = createOpenAICompatible({ name: 'hearth', baseURL, apiKey, includeUsage: true });
  const { text } = await generateText({ model: provider.chatModel('svc/tiny-chat'), prompt: 'Hello!', temperature: 0, maxOutputTokens: 16 });
  assert.equal(typeof text, 'string');
  const { embedding } = await embed({ model: provider.embeddingModel('svc/tiny-embed'), value: 'a' });
  assert.equal(embedding.length, 1536);
  seen.ai = text;
});

test("a request to another host is left to the app's unhandled-request handler", async () => {
  await assert.rejects(fetch('https://other.example.test/x'));
  await assert.rejects(fetch('https://api.example.test/v1/charges'));
  assert.deepEqual(unhandled, ['GET https://other.example.test/x', 'GET https://api.example.test/v1/charges']);
});
