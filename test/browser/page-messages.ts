// Runs in the demo page, in a module of its own so that only its suite makes Vite bundle
// @anthropic-ai/sdk: Anthropic's SDK against the page's own Hearth, its base URL the origin
// (the Messages routes sit at <origin>/v1/messages), beside the openai SDK asking the
// same conversation on /v1/chat/completions, so the test compares the two answers from one tab.
import type Anthropic from '@anthropic-ai/sdk';
import type { Info } from './page-client.js';

const MODEL = 'svc/tiny-chat';
const USER = 'Tell me about the sea.';
const INPUT_SCHEMA = { type: 'object' as const, properties: { city: { type: 'string', maxLength: 12 } }, required: ['city'] };

/** One of each: create, stream and countTokens on the same conversation, a required tool call,
 * the same two on chat, and a request without max_tokens. */
export async function messagesFlow(info: Info) {
  const [{ default: AnthropicSdk }, { default: OpenAI }] = await Promise.all([import('@anthropic-ai/sdk'), import('openai')]);
  // The origin of Hearth's OpenAI base URL, as docs/anthropic.md tells pages to set it.
  const anthropic = new AnthropicSdk({ baseURL: new URL(info.baseURL).origin, apiKey: info.apiKey, dangerouslyAllowBrowser: true, maxRetries: 0 });
  const openai = new OpenAI({ baseURL: info.baseURL, apiKey: info.apiKey, dangerouslyAllowBrowser: true, maxRetries: 0 });
  // Greedy: SDK 1.x's types lack temperature, which the Messages API still takes (test/helpers/anthropic.ts).
  const params = { model: MODEL, max_tokens: 16, temperature: 0, messages: [{ role: 'user', content: USER }] } as Anthropic.MessageCreateParamsNonStreaming;

  const created = await anthropic.messages.create(params);
  const events: string[] = [];
  let streamedText = '';
  const stream = anthropic.messages.stream(params);
  stream.on('streamEvent', (e) => events.push(e.type));
  stream.on('text', (t) => (streamedText += t));
  const final = await stream.finalMessage();
  const counted = await anthropic.messages.countTokens({ model: MODEL, messages: params.messages });
  const chat = await openai.chat.completions.create({ model: MODEL, max_tokens: 16, temperature: 0, messages: [{ role: 'user', content: USER }] });

  const tool = await anthropic.messages.create({
    ...params,
    max_tokens: 100,
    tools: [{ name: 'get_weather', input_schema: INPUT_SCHEMA }],
    tool_choice: { type: 'tool', name: 'get_weather' },
  });
  const chatTool = await openai.chat.completions.create({
    model: MODEL,
    max_tokens: 100,
    temperature: 0,
    messages: [{ role: 'user', content: USER }],
    tools: [{ type: 'function', function: { name: 'get_weather', parameters: INPUT_SCHEMA } }],
    tool_choice: { type: 'function', function: { name: 'get_weather' } },
  });

  const refused = await anthropic.messages
    .create({ model: MODEL, messages: params.messages } as Anthropic.MessageCreateParamsNonStreaming)
    .then(
      () => undefined,
      (e: unknown) => {
        const err = e as InstanceType<typeof AnthropicSdk.APIError>;
        return { badRequest: e instanceof AnthropicSdk.BadRequestError, status: err.status, body: err.error, requestID: err.requestID };
      },
    );

  const call = chatTool.choices[0]!.message.tool_calls?.[0];
  return {
    created,
    final,
    events,
    streamedText,
    counted,
    chat: { content: chat.choices[0]!.message.content, finish: chat.choices[0]!.finish_reason, usage: chat.usage! },
    tool,
    chatToolArguments: call?.type === 'function' ? call.function.arguments : undefined,
    refused,
  };
}
