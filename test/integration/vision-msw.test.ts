// hearth/msw in an app's test suite: the openai SDK's chat with an image part, the AI SDK's image
// part and LangChain's image_url part, answered in process by the SmolVLM fixture, give
// transformers.js's reply for the same folder and bytes.
import { join } from 'node:path';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { HumanMessage } from '@langchain/core/messages';
import { ChatOpenAI } from '@langchain/openai';
import { generateText } from 'ai';
import OpenAI from 'openai';
import { beforeAll, describe, expect, it } from 'vitest';
import { transformersOnExports } from '../helpers/exports.js';
import { useHearthMsw } from '../helpers/msw.js';
import { dataUrl, noisePng, referenceImageReply, VLM_FIXTURE } from '../helpers/vision.js';

const BASE_URL = 'https://vision.hearth.test/v1';
const QUESTION = 'Describe the picture.';

useHearthMsw(BASE_URL, { models: async () => [join(await transformersOnExports(), VLM_FIXTURE)] });

let picture: Buffer;
let reference: { text: string; promptTokens: number };

beforeAll(async () => {
  picture = await noisePng(48, 40, 11);
  reference = await referenceImageReply(picture, QUESTION, 8);
}, 300_000);

describe('hearth/msw with a vision-language model', () => {
  it("answers the openai SDK's image_url part with transformers.js's reply", async () => {
    // Made after msw's setup: the SDK takes the fetch it patched.
    const client = new OpenAI({ baseURL: BASE_URL, apiKey: 'svc_live_' + 'v'.repeat(32), maxRetries: 0 });
    const reply = await client.chat.completions.create({
      model: `svc/${VLM_FIXTURE}`,
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: dataUrl(picture) } }, { type: 'text', text: QUESTION }] }],
      temperature: 0,
      max_tokens: 8,
    });
    expect(reply.choices[0]!.message.content).toBe(reference.text);
    expect(reply.usage!.prompt_tokens).toBe(reference.promptTokens);
  });

  it("answers the AI SDK's image part and LangChain's image_url part with the same reply", async () => {
    const apiKey = 'svc_live_' + 'v'.repeat(32);
    const model = createOpenAICompatible({ name: 'hearth', baseURL: BASE_URL, apiKey }).chatModel(`svc/${VLM_FIXTURE}`);
    const { text } = await generateText({
      model,
      temperature: 0,
      maxOutputTokens: 8,
      maxRetries: 0,
      messages: [{ role: 'user', content: [{ type: 'image', image: new Uint8Array(picture), mediaType: 'image/png' }, { type: 'text', text: QUESTION }] }],
    });
    expect(text).toBe(reference.text);
    const llm = new ChatOpenAI({ model: `svc/${VLM_FIXTURE}`, apiKey, temperature: 0, maxTokens: 8, maxRetries: 0, configuration: { baseURL: BASE_URL } });
    const message = new HumanMessage({ content: [{ type: 'image_url', image_url: { url: dataUrl(picture) } }, { type: 'text', text: QUESTION }] });
    expect((await llm.invoke([message])).content).toBe(reference.text);
  });
});
