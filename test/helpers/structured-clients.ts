// The structured-output and tool checks run with the Vercel AI SDK and LangChain, shared
// by every front door (hearth/msw, the HTTP server) so each runs the same assertions. The
// fixture writes gibberish, so output that validates is the grammar's doing: assertions
// check validity, never content.
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { tool as lcTool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
import { generateObject, generateText, streamObject, tool } from 'ai';
import { describe, expect, it } from 'vitest';
import { Person, Weather } from './client-schemas.js';

export interface Endpoint {
  baseURL: string;
  apiKey: string;
}

/**
 * Registers the AI SDK and LangChain describe blocks for one front door. `endpoint` is
 * read inside each test because a server's address is known only after beforeAll.
 */
export function describeStructuredClients(frontDoor: string, endpoint: () => Endpoint): void {
  describe(`the Vercel AI SDK through ${frontDoor}`, () => {
    const model = () => {
      const { baseURL, apiKey } = endpoint();
      return createOpenAICompatible({ name: 'hearth', baseURL, apiKey, supportsStructuredOutputs: true }).chatModel('svc/tiny-chat');
    };

    it('generateObject returns an object of the schema', async () => {
      const { object, finishReason } = await generateObject({ model: model(), schema: Person, prompt: 'Describe someone.', temperature: 0 });
      expect(finishReason).toBe('stop');
      expect(Person.safeParse(object).success).toBe(true);
    });

    it('streamObject streams partial objects that end as one of the schema', async () => {
      const result = streamObject({ model: model(), schema: Person, prompt: 'Describe someone.', temperature: 0 });
      let partials = 0;
      for await (const _ of result.partialObjectStream) partials++;
      expect(partials).toBeGreaterThan(1);
      expect(Person.safeParse(await result.object).success).toBe(true);
    });

    it('generateText with a required tool gets a call with valid input', async () => {
      const r = await generateText({
        model: model(),
        prompt: 'Weather in Paris?',
        tools: { get_weather: tool({ description: 'Weather in a city', inputSchema: Weather }) },
        toolChoice: 'required',
        temperature: 0,
      });
      expect(r.finishReason).toBe('tool-calls');
      expect(r.toolCalls.length).toBeGreaterThan(0);
      expect(r.toolCalls[0]!.toolName).toBe('get_weather');
      expect(Weather.safeParse(r.toolCalls[0]!.input).success).toBe(true);
    });
  });

  describe(`LangChain through ${frontDoor}`, () => {
    const llm = () => {
      const { baseURL, apiKey } = endpoint();
      return new ChatOpenAI({ model: 'svc/tiny-chat', apiKey, temperature: 0, maxRetries: 0, configuration: { baseURL } });
    };

    it('withStructuredOutput returns an object of the schema', async () => {
      const out = await llm().withStructuredOutput(Person, { name: 'person', method: 'jsonSchema' }).invoke('Describe someone.');
      expect(Person.safeParse(out).success).toBe(true);
    });

    it('bindTools gets a tool call with valid arguments', async () => {
      const getWeather = lcTool(async () => 'sunny', { name: 'get_weather', description: 'Weather in a city', schema: Weather });
      const msg = await llm().bindTools([getWeather], { tool_choice: 'required' }).invoke('Weather in Paris?');
      expect(msg.tool_calls?.length).toBeGreaterThan(0);
      expect(msg.tool_calls![0]!.name).toBe('get_weather');
      expect(Weather.safeParse(msg.tool_calls![0]!.args).success).toBe(true);
    });
  });
}
