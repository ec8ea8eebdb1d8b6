// Runs in the demo page like page-client.ts, but in a module of its own: only the suite
// that calls it makes Vite bundle the AI SDK and LangChain (startDemo's pageDeps). Were
// these imports in page-client.ts, every suite's page would find them mid-run and Vite
// would re-optimize, leaving pages loaded before with dependency URLs that no longer resolve.
import type { Info } from './page-client.js';

/** The Vercel AI SDK and LangChain in the page, each call as an application makes it. */
export async function frameworkFlow(info: Info) {
  const [{ createOpenAICompatible }, ai, { ChatOpenAI }, { tool: lcTool }, { Person, Weather }] = await Promise.all([
    import('@ai-sdk/openai-compatible'),
    import('ai'),
    import('@langchain/openai'),
    import('@langchain/core/tools'),
    import('../helpers/client-schemas.js'),
  ]);
  const baseURL = `${location.origin}/v1`;
  const model = createOpenAICompatible({ name: 'hearth', baseURL, apiKey: info.apiKey, supportsStructuredOutputs: true }).chatModel('svc/tiny-chat');
  const object = await ai.generateObject({ model, schema: Person, prompt: 'Describe someone.', temperature: 0, maxRetries: 0 });
  const streamed = ai.streamObject({ model, schema: Person, prompt: 'Describe someone.', temperature: 0, maxRetries: 0 });
  let partials = 0;
  for await (const _ of streamed.partialObjectStream) partials++;
  const text = await ai.generateText({
    model,
    prompt: 'Weather in Paris?',
    tools: { get_weather: ai.tool({ description: 'Weather in a city', inputSchema: Weather }) },
    toolChoice: 'required',
    temperature: 0,
    maxRetries: 0,
  });
  const llm = new ChatOpenAI({ model: 'svc/tiny-chat', apiKey: info.apiKey, temperature: 0, maxRetries: 0, configuration: { baseURL, dangerouslyAllowBrowser: true } });
  const structured = await llm.withStructuredOutput(Person, { name: 'person', method: 'jsonSchema' }).invoke('Describe someone.');
  const getWeather = lcTool(async () => 'sunny', { name: 'get_weather', description: 'Weather in a city', schema: Weather });
  const bound = await llm.bindTools([getWeather], { tool_choice: 'required' }).invoke('Weather in Paris?');
  return {
    generateObject: { object: object.object, finish: object.finishReason },
    streamObject: { object: await streamed.object, partials },
    generateText: { finish: text.finishReason, calls: text.toolCalls.map((c) => ({ name: c.toolName, input: c.input })) },
    withStructuredOutput: structured,
    bindTools: (bound.tool_calls ?? []).map((c) => ({ name: c.name, args: c.args })),
  };
}
