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

/** The OpenAI Agents SDK in the page: an agent with a function tool run to its final output,
 * every model turn a /v1/responses request answered by the page's own engine. */
export async function agentsSdkRun(info: Info) {
  const [{ Agent, run, setDefaultOpenAIClient, setTracingDisabled, tool }, { default: OpenAI }, { z }] = await Promise.all([
    import('@openai/agents'),
    import('openai'),
    import('zod'),
  ]);
  setTracingDisabled(true); // tracing would export to OpenAI's servers
  setDefaultOpenAIClient(new OpenAI({ baseURL: `${location.origin}/v1`, apiKey: info.apiKey, dangerouslyAllowBrowser: true, maxRetries: 0 }));
  const calls: string[] = [];
  const getWeather = tool({
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: z.object({ city: z.string().max(16) }),
    execute: async ({ city }) => (calls.push(city), `Sunny, 21 C in ${city}`),
  });
  const agent = new Agent({
    name: 'Forecaster',
    instructions: 'Answer with the weather.',
    model: 'svc/tiny-chat',
    tools: [getWeather],
    // Required on the first turn; the SDK resets it to auto after a call, so the next turn answers.
    modelSettings: { toolChoice: 'required', temperature: 0, maxTokens: 400 },
  });
  const result = await run(agent, 'What is the weather in Paris?', { maxTurns: 4 });
  return {
    calls,
    finalOutput: result.finalOutput,
    items: result.newItems.map((i) => i.type),
    responses: result.rawResponses.length,
  };
}
