// A chat with an image through the openai SDK, as an app sends it: a data: URL image_url part
// to the SmolVLM fixture over `hearth serve` (a real process) gives transformers.js's greedy
// reply for the same folder and bytes; the image limits answer 400 and 413 naming the part,
// never a 500. An http URL of a host --image-url-hosts names is fetched; others are refused.
import { mkdtemp } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { HumanMessage } from '@langchain/core/messages';
import { ChatOpenAI } from '@langchain/openai';
import { generateText } from 'ai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GREEDY } from '../helpers/anthropic.js';
import { transformersOnExports } from '../helpers/exports.js';
import { openapiAvailable, validateAgainst } from '../helpers/openapi.js';
import { createKey, startServer, waitReady, type TestServer } from '../helpers/server.js';
import { dataUrl, noisePng, QWEN2VL_FIXTURE, referenceImageReply, VLM_FIXTURE } from '../helpers/vision.js';

const MODEL = `svc/${VLM_FIXTURE}`;
const MAX_TOKENS = 8;
const QUESTION = 'What is in this image?';

const ask = (url: string, text = QUESTION): OpenAI.ChatCompletionMessageParam[] => [
  { role: 'user', content: [{ type: 'image_url', image_url: { url } }, { type: 'text', text }] },
];

let server: TestServer;
let client: OpenAI;
let anthropic: Anthropic;
let apiKey: string;
let picture: Buffer;
let reference: { text: string; promptTokens: number };
let qwenReference: { text: string; promptTokens: number };
/** A picture host on 127.0.0.1: /cat.png, /huge.png (chunked, past the byte limit), /moved (to localhost), else 404. */
let pictures: Server;
let picturesAt: string;

function startPictureHost(): Promise<void> {
  pictures = createServer((req, res) => {
    const port = (pictures.address() as AddressInfo).port;
    if (req.url === '/cat.png') return res.writeHead(200, { 'content-type': 'image/png' }).end(picture);
    if (req.url === '/moved') return res.writeHead(302, { location: `http://localhost:${port}/cat.png` }).end();
    if (req.url === '/hop') return res.writeHead(301, { location: '/cat.png' }).end();
    if (req.url === '/huge.png') {
      res.writeHead(200, { 'content-type': 'image/png' });
      for (let i = 0; i < 8; i++) res.write(Buffer.alloc(10_000, 7));
      return res.end();
    }
    res.writeHead(404).end();
  });
  return new Promise((resolve) => pictures.listen(0, '127.0.0.1', () => {
    picturesAt = `http://127.0.0.1:${(pictures.address() as AddressInfo).port}`;
    resolve();
  }));
}

beforeAll(async () => {
  const folder = join(await transformersOnExports(), VLM_FIXTURE);
  picture = await noisePng(64, 64, 7);
  reference = await referenceImageReply(picture, QUESTION, MAX_TOKENS);
  qwenReference = await referenceImageReply(picture, QUESTION, MAX_TOKENS, QWEN2VL_FIXTURE);
  await startPictureHost();
  const dataDir = await mkdtemp(join(tmpdir(), 'hearth-vision-'));
  const key = await createKey(dataDir);
  server = await startServer(['--models', `${folder},${join(await transformersOnExports(), QWEN2VL_FIXTURE)}`, '--max-body-bytes', '4096', '--max-images', '2', '--max-image-bytes', '50000', '--max-image-pixels', '5000', '--image-url-hosts', new URL(picturesAt).host], dataDir);
  await waitReady(server.url).catch((e) => {
    throw new Error(`${e.message}\n${server.output()}`);
  });
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: key, maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: server.url, apiKey: key, maxRetries: 0 });
  apiKey = key;
}, 300_000);

afterAll(async () => {
  pictures?.close();
  expect(await server?.stop()).toBe(0);
});

const create = (c: OpenAI, messages: OpenAI.ChatCompletionMessageParam[]) =>
  c.chat.completions.create({ model: MODEL, messages, temperature: 0, max_tokens: MAX_TOKENS });

describe('a chat with an image through the openai SDK', () => {
  it('lists the VLM with input_modalities text and image', async () => {
    expect(await client.models.retrieve(MODEL)).toMatchObject({ id: MODEL, input_modalities: ['text', 'image'] });
  });

  it("gets transformers.js's greedy reply and prompt count over hearth serve, in a body that validates, though the image is over the body limit", async () => {
    expect(dataUrl(picture).length).toBeGreaterThan(4096);
    const reply = await create(client, ask(dataUrl(picture)));
    expect(reply.choices[0]!.message.content).toBe(reference.text);
    expect(reply.usage!.prompt_tokens).toBe(reference.promptTokens);
    if (openapiAvailable) expect(validateAgainst('CreateChatCompletionResponse', reply)).toEqual([]);
  });

  it("serves a Qwen2-VL model beside it with transformers.js's reply and prompt count", async () => {
    const reply = await client.chat.completions.create({ model: `svc/${QWEN2VL_FIXTURE}`, messages: ask(dataUrl(picture)), temperature: 0, max_tokens: MAX_TOKENS });
    expect([reply.choices[0]!.message.content, reply.usage!.prompt_tokens]).toEqual([qwenReference.text, qwenReference.promptTokens]);
    expect(await client.models.retrieve(`svc/${QWEN2VL_FIXTURE}`)).toMatchObject({ input_modalities: ['text', 'image'] });
  });

  it('gets the same reply streamed', async () => {
    const stream = await client.chat.completions.create({ model: MODEL, messages: ask(dataUrl(picture)), temperature: 0, max_tokens: MAX_TOKENS, stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe(reference.text);
  });

  it('still holds the rest of the body to the body limit', async () => {
    const err = await create(client, ask(dataUrl(picture), 'x'.repeat(5000))).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err.status).toBe(413);
  });

  it('refuses, naming the part, more images than --max-images, an image over the byte or pixel limit, a bad payload, a type or a URL it does not take', async () => {
    const url = dataUrl(picture);
    const three: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: [0, 1, 2].map(() => ({ type: 'image_url' as const, image_url: { url } })) }];
    const cases: [OpenAI.ChatCompletionMessageParam[], number, string, RegExp][] = [
      [three, 400, 'messages[0].content[2]', /at most 2/],
      [ask(dataUrl(Buffer.alloc(60_000, 1))), 413, 'messages[0].content[0]', /larger than the limit of 50000 bytes/],
      [ask(dataUrl(await noisePng(80, 80, 3))), 413, 'messages[0].content[0]', /6400 pixels; the limit is 5000/],
      [ask(dataUrl(Buffer.from('not an image at all'))), 400, 'messages[0].content[0]', /could not be decoded/],
      [ask(dataUrl(picture, 'image/bmp')), 400, 'messages[0].content[0].image_url.url', /image\/bmp/],
      [ask('https://example.com/cat.png'), 400, 'messages[0].content[0].image_url.url', /--image-url-hosts/],
      [ask('file:///etc/passwd'), 400, 'messages[0].content[0].image_url.url', /data: URL/],
    ];
    for (const [messages, status, param, message] of cases) {
      const err = await create(client, messages).catch((e) => e);
      expect(err, param).toBeInstanceOf(OpenAI.APIError);
      expect([err.status, err.param], String(message)).toEqual([status, param]);
      expect(err.message).toMatch(message);
    }
    // The server answered each and still serves.
    expect((await create(client, ask(url))).choices[0]!.message.content).toBe(reference.text);
  });

  it('fetches an http image URL of a host --image-url-hosts names, redirects within it included, and gets the same reply', async () => {
    for (const path of ['/cat.png', '/hop']) {
      const reply = await create(client, ask(`${picturesAt}${path}`));
      expect([reply.choices[0]!.message.content, reply.usage!.prompt_tokens], path).toEqual([reference.text, reference.promptTokens]);
    }
    const viaAnthropic = await anthropic.messages.create({
      model: MODEL, max_tokens: MAX_TOKENS, ...GREEDY,
      messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: `${picturesAt}/cat.png` } }, { type: 'text', text: QUESTION }] }],
    });
    expect(viaAnthropic.content.map((b) => (b.type === 'text' ? b.text : '')).join('')).toBe(reference.text);
  });

  it('refuses an image URL of another host, a redirect out of the allowed hosts, a missing image and one past the byte limit, naming the URL or the part', async () => {
    const port = new URL(picturesAt).port;
    const cases: [string, number, string, RegExp][] = [
      [`http://localhost:${port}/cat.png`, 400, 'messages[0].content[0].image_url.url', /only from http\(s\) URLs of 127\.0\.0\.1:\d+ \(hearth serve --image-url-hosts\)/],
      [`${picturesAt}/moved`, 400, 'messages[0].content[0].image_url.url', /redirects to http:\/\/localhost/],
      [`${picturesAt}/missing.png`, 400, 'messages[0].content[0].image_url.url', /answered 404/],
      [`${picturesAt}/huge.png`, 413, 'messages[0].content[0]', /larger than the limit of 50000 bytes/],
    ];
    for (const [url, status, param, message] of cases) {
      const err = await create(client, ask(url)).catch((e) => e);
      expect(err, url).toBeInstanceOf(OpenAI.APIError);
      expect([err.status, err.param], url).toEqual([status, param]);
      expect(err.message).toMatch(message);
    }
  });

  it("gets the same reply from the Responses API's input_image, and names an input_image's path when it refuses one", async () => {
    const input = (url: string): OpenAI.Responses.ResponseInput => [
      { role: 'user', content: [{ type: 'input_image', image_url: url, detail: 'auto' }, { type: 'input_text', text: QUESTION }] },
    ];
    const reply = await client.responses.create({ model: MODEL, input: input(dataUrl(picture)), temperature: 0, max_output_tokens: MAX_TOKENS, store: false });
    expect([reply.output_text, reply.usage!.input_tokens]).toEqual([reference.text, reference.promptTokens]);
    expect(reply.usage!.input_tokens).toBe(reference.promptTokens);
    const err = await client.responses.create({ model: MODEL, input: input('https://example.com/a.png'), max_output_tokens: 4 }).catch((e) => e);
    expect([err.status, err.param]).toEqual([400, 'input[0].content[0].image_url']);
  });

  it("gets the same reply from Anthropic's Messages API with a base64 image block, and counts its tokens", async () => {
    const content: Anthropic.ContentBlockParam[] = [
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: picture.toString('base64') } },
      { type: 'text', text: QUESTION },
    ];
    const reply = await anthropic.messages.create({ model: MODEL, max_tokens: MAX_TOKENS, ...GREEDY, messages: [{ role: 'user', content }] });
    expect(reply.content.map((b) => (b.type === 'text' ? b.text : '')).join('')).toBe(reference.text);
    // Anthropic's input_tokens leave out what the cache read (the same image and question came before).
    expect(reply.usage.input_tokens + (reply.usage.cache_read_input_tokens ?? 0)).toBe(reference.promptTokens);
    const counted = await anthropic.messages.countTokens({ model: MODEL, messages: [{ role: 'user', content }] });
    expect(counted.input_tokens).toBe(reference.promptTokens);
  });

  it("gets the same reply from the AI SDK's generateText with an image part and LangChain's HumanMessage with an image_url part", async () => {
    const model = createOpenAICompatible({ name: 'hearth', baseURL: `${server.url}/v1`, apiKey }).chatModel(MODEL);
    const { text } = await generateText({
      model,
      temperature: 0,
      maxOutputTokens: MAX_TOKENS,
      messages: [{ role: 'user', content: [{ type: 'image', image: new Uint8Array(picture), mediaType: 'image/png' }, { type: 'text', text: QUESTION }] }],
    });
    expect(text).toBe(reference.text);
    const llm = new ChatOpenAI({ model: MODEL, apiKey, temperature: 0, maxTokens: MAX_TOKENS, maxRetries: 0, configuration: { baseURL: `${server.url}/v1` } });
    const message = new HumanMessage({ content: [{ type: 'image_url', image_url: { url: dataUrl(picture) } }, { type: 'text', text: QUESTION }] });
    expect((await llm.invoke([message])).content).toBe(reference.text);
  });
});
