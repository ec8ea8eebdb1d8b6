// The clients that speak the Responses API by default, through hearth/msw in an
// application's suite: the AI SDK's openai(id) provider and an OpenAI Agents SDK agent with
// a function tool, against the in-process model with no network.
import { createOpenAI } from '@ai-sdk/openai';
import { Agent, run, setDefaultOpenAIClient, setTracingDisabled, tool as agentTool } from '@openai/agents';
import { generateObject, generateText, streamText } from 'ai';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Person } from '../helpers/client-schemas.js';
import { useHearthMsw } from '../helpers/msw.js';

const baseURL = 'https://api.example.test/v1';
const apiKey = `svc_live_${'a1B2'.repeat(8)}`;
useHearthMsw(baseURL);

describe('Responses API clients through the MSW handlers', () => {
  it("the AI SDK's default OpenAI provider generates, streams and makes objects", async () => {
    const model = createOpenAI({ baseURL, apiKey })('svc/tiny-chat');
    const whole = await generateText({ model, prompt: 'Tell me about the sea.', temperature: 0, maxOutputTokens: 24, maxRetries: 0 });
    let streamed = '';
    for await (const delta of streamText({ model, prompt: 'Tell me about the sea.', temperature: 0, maxOutputTokens: 24, maxRetries: 0 }).textStream) streamed += delta;
    expect(whole.text.length).toBeGreaterThan(0);
    expect(streamed).toBe(whole.text);
    const { object } = await generateObject({ model, schema: Person, prompt: 'Describe someone.', temperature: 0, maxRetries: 0 });
    expect(Person.parse(object)).toEqual(object);
  });

  it('an Agents SDK agent calls its function tool and reaches its final output', async () => {
    setTracingDisabled(true);
    setDefaultOpenAIClient(new OpenAI({ baseURL, apiKey, maxRetries: 0 }));
    const calls: string[] = [];
    const getWeather = agentTool({
      name: 'get_weather',
      description: 'The weather in a city',
      parameters: z.object({ city: z.string().max(16) }),
      execute: async ({ city }) => (calls.push(city), `Sunny in ${city}`),
    });
    const agent = new Agent({ name: 'Forecaster', model: 'svc/tiny-chat', tools: [getWeather], modelSettings: { toolChoice: 'required', temperature: 0, maxTokens: 400 } });
    const result = await run(agent, 'What is the weather in Paris?', { maxTurns: 4 });
    expect(calls).toHaveLength(1);
    expect(typeof result.finalOutput).toBe('string');
  });
});
