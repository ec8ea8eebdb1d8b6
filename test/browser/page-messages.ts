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

/** The AI SDK's @ai-sdk/anthropic (generateText, a forced tool call) and LangChain's
 * ChatAnthropic (invoke) against the page's Hearth, on messagesFlow's conversation and tool. */
export async function messagesClientsFlow(info: Info) {
  const [{ createAnthropic }, { generateText, jsonSchema, tool }, { ChatAnthropic }] = await Promise.all([
    import('@ai-sdk/anthropic'),
    import('ai'),
    import('@langchain/anthropic'),
  ]);
  const origin = new URL(info.baseURL).origin;
  // The AI SDK sends the key as x-api-key, to <baseURL>/messages.
  const model = createAnthropic({ baseURL: `${origin}/v1`, apiKey: info.apiKey, headers: { 'anthropic-dangerous-direct-browser-access': 'true' } })(MODEL);
  const ai = await generateText({ model, prompt: USER, temperature: 0, maxOutputTokens: 16, maxRetries: 0 });
  const aiTool = await generateText({
    model,
    prompt: USER,
    temperature: 0,
    maxOutputTokens: 100,
    maxRetries: 0,
    tools: { get_weather: tool({ inputSchema: jsonSchema(INPUT_SCHEMA) }) },
    toolChoice: { type: 'tool', toolName: 'get_weather' },
  });
  const lc = await new ChatAnthropic({ model: MODEL, anthropicApiUrl: origin, apiKey: info.apiKey, temperature: 0, maxTokens: 16, maxRetries: 0, clientOptions: { dangerouslyAllowBrowser: true } }).invoke(USER);
  return {
    ai: { text: ai.text, usage: [ai.usage.inputTokens, ai.usage.outputTokens] },
    aiTool: aiTool.toolCalls.map((c) => [c.toolName, c.input]),
    langchain: { content: lc.content, usage: [lc.usage_metadata?.input_tokens, lc.usage_metadata?.output_tokens] },
  };
}
