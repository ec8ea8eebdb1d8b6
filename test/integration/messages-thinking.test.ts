// Thinking blocks through Anthropic's SDK against a real `hearth serve`, on the designed
// reasoning fixtures (Qwen3's real tokenizer and templates; one opens the think block in the
// prompt): the thinking is a `thinking` block with a signature before the text, as chat's
// reasoning_content is before its content; streams send it as thinking_delta then
// signature_delta; `thinking: {type: "disabled"}` turns it off as reasoning_effort "none" does;
// thinking sent back is read; a required tool call follows the thinking.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { THINKING_REPLY } from '../../models/exports/thinking.js';
import { exportFixtures } from '../helpers/exports.js';
import { createKey, startServer, waitReady, type TestServer } from '../helpers/server.js';
import { GREEDY } from '../helpers/anthropic.js';

const THINK = 'svc/qwen3-think-export';
const OPEN = 'svc/qwen3-think-open-export';
const THINKING = THINKING_REPLY.thinking.trim();
const ANSWER = THINKING_REPLY.answer;
const hello: Anthropic.MessageParam[] = [{ role: 'user', content: 'Hello there' }];
type Reasoned = { reasoning_content?: string | null };

let server: TestServer;
let openai: OpenAI;
let anthropic: Anthropic;

beforeAll(async () => {
  const dir = await exportFixtures();
  const dataDir = await mkdtemp(join(tmpdir(), 'hearth-messages-thinking-'));
  const key = await createKey(dataDir);
  server = await startServer(['--models', [join(dir, 'qwen3-think-export'), join(dir, 'qwen3-think-open-export')].join(',')], dataDir);
  await waitReady(server.url);
  openai = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: key, maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: server.url, apiKey: key, maxRetries: 0 });
}, 120_000);

afterAll(async () => {
  expect(await server?.stop()).toBe(0);
});

const kinds = (m: Anthropic.Message) => m.content.map((b) => b.type);

describe('thinking blocks through Anthropic’s SDK', () => {
  it('puts the thinking in a signed thinking block before the text, as chat splits reasoning_content from content', async () => {
    for (const model of [THINK, OPEN]) {
      for (const thinking of [undefined, { type: 'enabled', budget_tokens: 1024 }, { type: 'adaptive' }] as const) {
        const m = await anthropic.messages.create({ model, max_tokens: 64, ...GREEDY, messages: hello, ...(thinking ? { thinking } : {}) });
        expect(kinds(m), model).toEqual(['thinking', 'text']);
        const [thought, said] = m.content as [Anthropic.ThinkingBlock, Anthropic.TextBlock];
        expect([thought.thinking, said.text]).toEqual([THINKING, ANSWER]);
        expect(thought.signature).toMatch(/\S/);
        expect(m.stop_reason).toBe('end_turn');
        const r = await openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hello there' }], temperature: 0, max_tokens: 64 });
        expect((r.choices[0]!.message as Reasoned).reasoning_content).toBe(thought.thinking);
        expect(r.choices[0]!.message.content).toBe(said.text);
        expect(m.usage.output_tokens).toBe(r.usage!.completion_tokens);
        expect(m.usage.input_tokens + m.usage.cache_read_input_tokens!).toBe(r.usage!.prompt_tokens);
        expect(m.usage.output_tokens_details).toEqual({ thinking_tokens: r.usage!.completion_tokens_details!.reasoning_tokens });
      }
    }
  });

  it('answers without thinking when thinking is disabled, as chat does with reasoning_effort none, and counts that prompt', async () => {
    const m = await anthropic.messages.create({ model: THINK, max_tokens: 64, ...GREEDY, messages: hello, thinking: { type: 'disabled' } });
    expect(m.content).toEqual([{ type: 'text', text: ANSWER }]);
    const r = await openai.chat.completions.create({ model: THINK, messages: [{ role: 'user', content: 'Hello there' }], temperature: 0, max_tokens: 64, reasoning_effort: 'none' });
    expect(m.usage.input_tokens + m.usage.cache_read_input_tokens!).toBe(r.usage!.prompt_tokens);
    const counted = await anthropic.messages.countTokens({ model: THINK, messages: hello, thinking: { type: 'disabled' } });
    const thinking = await anthropic.messages.countTokens({ model: THINK, messages: hello });
    expect(counted.input_tokens).toBe(r.usage!.prompt_tokens);
    expect(counted.input_tokens).not.toBe(thinking.input_tokens);
  });

  it('streams the thinking as thinking_delta events, then its signature, then the text block', async () => {
    const created = await anthropic.messages.create({ model: THINK, max_tokens: 64, ...GREEDY, messages: hello });
    const events: Anthropic.RawMessageStreamEvent[] = [];
    for await (const e of await anthropic.messages.create({ model: THINK, max_tokens: 64, ...GREEDY, messages: hello, stream: true })) events.push(e);
    const starts = events.flatMap((e) => (e.type === 'content_block_start' ? [e] : []));
    expect(starts.map((e) => [e.index, e.content_block.type])).toEqual([
      [0, 'thinking'],
      [1, 'text'],
    ]);
    expect(starts[0]!.content_block).toEqual({ type: 'thinking', thinking: '', signature: '' });
    const deltas = (i: number) => events.flatMap((e) => (e.type === 'content_block_delta' && e.index === i ? [e.delta] : []));
    const thought = deltas(0);
    expect(thought.slice(0, -1).every((d) => d.type === 'thinking_delta')).toBe(true);
    expect(thought.length).toBeGreaterThan(5);
    expect(thought.at(-1)).toEqual({ type: 'signature_delta', signature: (created.content[0] as Anthropic.ThinkingBlock).signature });
    expect(thought.flatMap((d) => (d.type === 'thinking_delta' ? [d.thinking] : [])).join('')).toBe(THINKING);
    expect(deltas(1).map((d) => (d.type === 'text_delta' ? d.text : '?')).join('')).toBe(ANSWER);
    // Each block stops before the next starts.
    const order = events.filter((e) => e.type === 'content_block_start' || e.type === 'content_block_stop').map((e) => `${e.type}:${(e as { index: number }).index}`);
    expect(order).toEqual(['content_block_start:0', 'content_block_stop:0', 'content_block_start:1', 'content_block_stop:1']);

    const final = await anthropic.messages.stream({ model: THINK, max_tokens: 64, ...GREEDY, messages: hello }).finalMessage();
    expect(final.content).toEqual(created.content);
  });

  it('reads thinking blocks sent back in the next turn, as chat reads reasoning_content', async () => {
    const first = await anthropic.messages.create({ model: THINK, max_tokens: 64, ...GREEDY, messages: hello });
    const next = await anthropic.messages.create({
      model: THINK,
      max_tokens: 64,
      ...GREEDY,
      messages: [...hello, { role: 'assistant', content: first.content as Anthropic.ContentBlockParam[] }, { role: 'user', content: 'And again?' }],
    });
    const r = await openai.chat.completions.create({
      model: THINK,
      temperature: 0,
      max_tokens: 64,
      messages: [
        { role: 'user', content: 'Hello there' },
        { role: 'assistant', content: ANSWER, reasoning_content: THINKING } as OpenAI.ChatCompletionAssistantMessageParam,
        { role: 'user', content: 'And again?' },
      ],
    });
    expect(next.content.flatMap((b) => (b.type === 'text' ? [b.text] : []))).toEqual([r.choices[0]!.message.content]);
    expect(next.usage.input_tokens + next.usage.cache_read_input_tokens!).toBe(r.usage!.prompt_tokens);
  });

  it('leaves the thinking’s text out of its block with display omitted, keeping the block and its signature', async () => {
    const m = await anthropic.messages.create({ model: THINK, max_tokens: 64, ...GREEDY, messages: hello, thinking: { type: 'enabled', budget_tokens: 1024, display: 'omitted' } });
    expect(kinds(m)).toEqual(['thinking', 'text']);
    expect(m.content[0]).toMatchObject({ type: 'thinking', thinking: '', signature: expect.stringMatching(/\S/) });
  });

  it('calls a tool after thinking with tool_choice any: a thinking block, then a tool_use block with chat’s arguments', async () => {
    const tools: Anthropic.Tool[] = [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }];
    const m = await anthropic.messages.create({ model: THINK, max_tokens: 64, ...GREEDY, messages: hello, tools, tool_choice: { type: 'any' } });
    expect(kinds(m)).toEqual(['thinking', 'tool_use']);
    expect(m.stop_reason).toBe('tool_use');
    const r = await openai.chat.completions.create({
      model: THINK,
      messages: [{ role: 'user', content: 'Hello there' }],
      temperature: 0,
      max_tokens: 64,
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: tools[0]!.input_schema } }],
      tool_choice: 'required',
    });
    const call = r.choices[0]!.message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(m.content[1]).toMatchObject({ type: 'tool_use', name: 'get_weather', input: JSON.parse(call.function.arguments) });
    expect((m.content[0] as Anthropic.ThinkingBlock).thinking).toBe((r.choices[0]!.message as Reasoned).reasoning_content);
  });
});
