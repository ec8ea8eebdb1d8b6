// Runs in the demo page, in a module of its own so that only its suite makes Vite bundle
// @ai-sdk/openai: the AI SDK's default OpenAI provider (the Responses API) against the page's
// own Hearth.
import type { Info } from './page-client.js';

export async function aiSdkResponses(info: Info) {
  const [{ createOpenAI }, { generateText, streamText }] = await Promise.all([import('@ai-sdk/openai'), import('ai')]);
  const model = createOpenAI({ baseURL: `${location.origin}/v1`, apiKey: info.apiKey })('svc/tiny-chat');
  const whole = await generateText({ model, prompt: 'Tell me about the sea.', temperature: 0, maxOutputTokens: 24, maxRetries: 0 });
  let streamed = '';
  let parts = 0;
  for await (const delta of streamText({ model, prompt: 'Tell me about the sea.', temperature: 0, maxOutputTokens: 24, maxRetries: 0 }).textStream) {
    streamed += delta;
    parts++;
  }
  return { text: whole.text, inputTokens: whole.usage.inputTokens, streamed, parts };
}
