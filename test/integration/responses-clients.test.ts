// The clients that speak the Responses API by default, against a real server, unmodified:
// the AI SDK's `openai(id)` provider (@ai-sdk/openai) for text, streams, objects and tools,
// and the OpenAI Agents SDK running an agent with a function tool to its final output.
import { createOpenAI } from '@ai-sdk/openai';
import { Agent, run, setDefaultOpenAIClient, setTracingDisabled, tool as agentTool } from '@openai/agents';
import { generateObject, generateText, streamText, tool } from 'ai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Person, Weather } from '../helpers/client-schemas.js';
import { startSdkServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
let key: string;

beforeAll(async () => {
  ({ server, key } = await startSdkServer('hearth-responses-clients-'));
}, 120_000);

afterAll(async () => {
  expect(await server?.stop()).toBe(0);
});

describe("the AI SDK's default OpenAI provider (the Responses API)", () => {
  const provider = () => createOpenAI({ baseURL: `${server.url}/v1`, apiKey: key });

  it('generateText and streamText give the same greedy text', async () => {
    const model = provider()('svc/tiny-chat');
    const whole = await generateText({ model, prompt: 'Tell me about the sea.', temperature: 0, maxOutputTokens: 24, maxRetries: 0 });
    expect(whole.text.length).toBeGreaterThan(0);
    expect(whole.usage.inputTokens).toBeGreaterThan(0);
    const streamed = streamText({ model, prompt: 'Tell me about the sea.', temperature: 0, maxOutputTokens: 24, maxRetries: 0 });
    let text = '';
    let parts = 0;
    for await (const delta of streamed.textStream) {
      text += delta;
      parts++;
    }
    expect(parts).toBeGreaterThan(3);
    expect(text).toBe(whole.text);
  });

  it('generateObject returns an object that fits the schema', async () => {
    const r = await generateObject({ model: provider()('svc/tiny-chat'), schema: Person, prompt: 'Describe someone.', temperature: 0, maxRetries: 0 });
    expect(Person.parse(r.object)).toEqual(r.object);
  });

  it('calls a tool when asked to', async () => {
    const r = await generateText({
      model: provider()('svc/tiny-chat'),
      prompt: 'Weather in Paris?',
      tools: { get_weather: tool({ description: 'Weather in a city', inputSchema: Weather }) },
      toolChoice: 'required',
      temperature: 0,
      maxRetries: 0,
    });
    expect(r.toolCalls).toHaveLength(1);
    expect(r.toolCalls[0]).toMatchObject({ toolName: 'get_weather' });
    expect(Weather.parse(r.toolCalls[0]!.input)).toEqual(r.toolCalls[0]!.input);
  });
});

describe('the OpenAI Agents SDK', () => {
  it('runs an agent with a function tool to its final output', async () => {
    setTracingDisabled(true); // tracing would export to OpenAI's servers
    setDefaultOpenAIClient(new OpenAI({ baseURL: `${server.url}/v1`, apiKey: key, maxRetries: 0 }));
    const calls: string[] = [];
    const getWeather = agentTool({
      name: 'get_weather',
      description: 'The weather in a city',
      parameters: z.object({ city: z.string().max(16) }),
      execute: async ({ city }) => {
        calls.push(city);
        return `Sunny, 21 C in ${city}`;
      },
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
    expect(calls).toHaveLength(1);
    expect(typeof result.finalOutput).toBe('string');
    expect(result.newItems.map((i) => i.type)).toEqual(expect.arrayContaining(['tool_call_item', 'tool_call_output_item', 'message_output_item']));
  });
});
