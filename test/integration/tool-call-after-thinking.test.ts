// A required tool call after a reasoning model's thinking, over `hearth serve` with the openai
// SDK, on the designed fixtures (Qwen3's real tokenizer and templates): the call ends, with
// arguments valid for the tool, within 64 tokens, in a reply and in a stream. The fixture is
// indifferent between spellings of text a grammar forces, so a call's fixed head spelled one
// byte a token, or arguments laid out over lines, would run it out (finish_reason "length").
// A json_schema answer after the same thinking is as it was.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { THINKING_REPLY } from '../../models/exports/thinking.js';
import { exportFixtures } from '../helpers/exports.js';
import { createKey, startServer, waitReady, type TestServer } from '../helpers/server.js';

const MODELS = ['svc/qwen3-think-export', 'svc/qwen3-think-open-export'];
const THINKING = THINKING_REPLY.thinking.trim();
const ANSWER = THINKING_REPLY.answer;
const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Hello there' }];
const tools: OpenAI.ChatCompletionTool[] = [
  { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } },
];
type Reasoned = { reasoning_content?: string | null };

let server: TestServer;
let client: OpenAI;

beforeAll(async () => {
  const dir = await exportFixtures();
  const dataDir = await mkdtemp(join(tmpdir(), 'hearth-call-after-thinking-'));
  const key = await createKey(dataDir);
  server = await startServer(['--models', [join(dir, 'qwen3-think-export'), join(dir, 'qwen3-think-open-export')].join(',')], dataDir);
  await waitReady(server.url);
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: key, maxRetries: 0 });
}, 120_000);

afterAll(async () => {
  expect(await server?.stop()).toBe(0);
});

describe('a required tool call after thinking, with max_tokens 64', () => {
  it('ends with finish_reason tool_calls and arguments valid for the tool, in the templates\' layout', async () => {
    for (const model of MODELS) {
      const r = await client.chat.completions.create({ model, messages, temperature: 0, max_tokens: 64, tools, tool_choice: 'required' });
      const message = r.choices[0]!.message as typeof r.choices[0]['message'] & Reasoned;
      expect(r.choices[0]!.finish_reason).toBe('tool_calls');
      expect(message.reasoning_content).toBe(THINKING);
      expect(message.tool_calls).toHaveLength(1);
      const call = message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
      expect(call.function).toEqual({ name: 'get_weather', arguments: `{"city": "${ANSWER}"}` });
      expect(r.usage!.completion_tokens).toBeLessThan(50);
    }
  });

  it('streams the same call, its arguments in pieces that join to the same JSON, and ends with tool_calls', async () => {
    for (const model of MODELS) {
      const stream = await client.chat.completions.create({ model, messages, temperature: 0, max_tokens: 64, tools, tool_choice: 'required', stream: true, stream_options: { include_usage: true } });
      let name = '';
      const pieces: string[] = [];
      let finish: string | null = null;
      let usage: OpenAI.CompletionUsage | null | undefined;
      for await (const chunk of stream) {
        usage ??= chunk.usage;
        const choice = chunk.choices[0];
        finish ??= choice?.finish_reason ?? null;
        for (const t of choice?.delta.tool_calls ?? []) {
          name += t.function?.name ?? '';
          if (t.function?.arguments) pieces.push(t.function.arguments);
        }
      }
      expect([name, finish]).toEqual(['get_weather', 'tool_calls']);
      expect(pieces.length).toBeGreaterThan(5); // token by token
      expect(JSON.parse(pieces.join(''))).toEqual({ city: ANSWER });
      expect(usage!.completion_tokens).toBeLessThan(50);
    }
  });

  it('leaves a json_schema answer after the same thinking as it was', async () => {
    const answer = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false };
    for (const model of MODELS) {
      const r = await client.chat.completions.create({ model, messages, temperature: 0, max_tokens: 64, response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: answer, strict: true } } });
      const message = r.choices[0]!.message as typeof r.choices[0]['message'] & Reasoned;
      expect([message.reasoning_content, message.content, r.choices[0]!.finish_reason]).toEqual([THINKING, `{\n  "answer":"${ANSWER}"\n}`, 'stop']);
    }
  });
});
