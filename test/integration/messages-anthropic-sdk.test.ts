// Anthropic's Messages API through Anthropic's SDK against a real `hearth serve` on tiny-chat:
// messages.create, messages.stream, messages.countTokens and models.list. Every reply is checked
// against the same conversation on /v1/chat/completions (greedy text, token counts, stop), never
// against canned text; the stream's events against the order and names of Anthropic's published
// stream format (message_start, then per block content_block_start, deltas, content_block_stop,
// then message_delta and message_stop, pings anywhere; each frame's `event:` its data's `type`).
import Anthropic from '@anthropic-ai/sdk';
import { zodOutputFormat } from '@anthropic-ai/sdk/helpers/zod';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startSdkServer, type TestServer } from '../helpers/server.js';
import { GREEDY } from '../helpers/anthropic.js';

const MODEL = 'svc/tiny-chat';
let server: TestServer;
let key: string;
let openai: OpenAI;
let anthropic: Anthropic;

beforeAll(async () => {
  ({ server, key, client: openai } = await startSdkServer('hearth-messages-'));
  anthropic = new Anthropic({ baseURL: server.url, apiKey: key, maxRetries: 0 });
}, 120_000);

afterAll(async () => {
  expect(await server?.stop()).toBe(0);
});

const chatOf = (messages: OpenAI.ChatCompletionMessageParam[], extra: Partial<OpenAI.ChatCompletionCreateParamsNonStreaming> = {}) =>
  openai.chat.completions.create({ model: MODEL, messages, temperature: 0, max_tokens: 24, ...extra });

const textOf = (m: Anthropic.Message) => m.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
const promptOf = (u: Anthropic.Usage) => u.input_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0);
const STOP: Record<string, Anthropic.StopReason> = { stop: 'end_turn', length: 'max_tokens' };

/** Anthropic's published stream grammar over event names, pings left out. */
const PUBLISHED_ORDER = /^message_start (content_block_start (content_block_delta )*content_block_stop )+message_delta message_stop$/;

describe('the Messages API through Anthropic’s SDK', () => {
  it('messages.create answers with the chat completion’s greedy text, token counts and stop reason', async () => {
    const m = await anthropic.messages.create({ model: MODEL, max_tokens: 24, ...GREEDY, messages: [{ role: 'user', content: 'Tell me about the sea.' }] });
    const chat = await chatOf([{ role: 'user', content: 'Tell me about the sea.' }]);
    expect(m).toMatchObject({ type: 'message', role: 'assistant', model: MODEL, stop_sequence: null });
    expect(m.id).toMatch(/^msg_/);
    expect(m.content).toEqual([{ type: 'text', text: chat.choices[0]!.message.content }]);
    expect(m.stop_reason).toBe(STOP[chat.choices[0]!.finish_reason]);
    expect(promptOf(m.usage)).toBe(chat.usage!.prompt_tokens);
    expect(m.usage.output_tokens).toBe(chat.usage!.completion_tokens);
    expect(m.usage.cache_creation_input_tokens).toBe(0);
  });

  it('reads a system prompt as a string or as text blocks joined by a blank line, and earlier turns, as chat reads them', async () => {
    const turns: Anthropic.MessageParam[] = [
      { role: 'user', content: [{ type: 'text', text: 'Hello!' }] },
      { role: 'assistant', content: 'Hi.' },
      { role: 'user', content: 'And the sea?' },
    ];
    const blocks = await anthropic.messages.create({
      model: MODEL,
      max_tokens: 24,
      ...GREEDY,
      system: [{ type: 'text', text: 'Answer briefly.' }, { type: 'text', text: 'Be kind.' }],
      messages: turns,
    });
    const string = await anthropic.messages.create({ model: MODEL, max_tokens: 24, ...GREEDY, system: 'Answer briefly.\n\nBe kind.', messages: turns });
    const chat = await chatOf([
      { role: 'system', content: 'Answer briefly.\n\nBe kind.' },
      { role: 'user', content: 'Hello!' },
      { role: 'assistant', content: 'Hi.' },
      { role: 'user', content: 'And the sea?' },
    ]);
    expect(textOf(blocks)).toBe(chat.choices[0]!.message.content);
    expect(textOf(string)).toBe(textOf(blocks));
    expect(promptOf(blocks.usage)).toBe(chat.usage!.prompt_tokens);
  });

  it('stops at a stop sequence with stop_reason stop_sequence, where chat stops at the same string', async () => {
    const free = await chatOf([{ role: 'user', content: 'Tell me about the sea.' }]);
    const words = free.choices[0]!.message.content!.trim().split(/\s+/);
    expect(words.length).toBeGreaterThan(2);
    const stop = words[2]!;
    const m = await anthropic.messages.create({ model: MODEL, max_tokens: 24, ...GREEDY, stop_sequences: ['never-written', stop], messages: [{ role: 'user', content: 'Tell me about the sea.' }] });
    const chat = await chatOf([{ role: 'user', content: 'Tell me about the sea.' }], { stop: ['never-written', stop] });
    expect(m).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: stop });
    expect(textOf(m)).toBe(chat.choices[0]!.message.content);
    expect(m.usage.output_tokens).toBe(chat.usage!.completion_tokens);
  });

  it('ends a reply cut by max_tokens with stop_reason max_tokens', async () => {
    const m = await anthropic.messages.create({ model: MODEL, max_tokens: 2, ...GREEDY, messages: [{ role: 'user', content: 'Hello!' }] });
    expect(m.stop_reason).toBe('max_tokens');
    expect(m.usage.output_tokens).toBe(2);
  });

  it('streams events in the order and with the names of Anthropic’s published format, deltas adding up to the created message', async () => {
    const params = { model: MODEL, max_tokens: 24, ...GREEDY, messages: [{ role: 'user' as const, content: 'Tell me about the sea.' }] };
    const created = await anthropic.messages.create(params);
    const events: Anthropic.RawMessageStreamEvent[] = [];
    for await (const e of await anthropic.messages.create({ ...params, stream: true })) events.push(e);
    expect(events.map((e) => e.type).join(' ')).toMatch(PUBLISHED_ORDER);
    const start = events[0] as Anthropic.RawMessageStartEvent;
    expect(start.message).toMatchObject({ id: expect.stringMatching(/^msg_/), type: 'message', role: 'assistant', model: MODEL, content: [], stop_reason: null });
    expect(promptOf(start.message.usage)).toBe(promptOf(created.usage));
    // One text block, index 0: its start, its text deltas and its stop.
    const blocks = events.filter((e) => e.type === 'content_block_start' || e.type === 'content_block_delta' || e.type === 'content_block_stop');
    expect(new Set(blocks.map((e) => e.index))).toEqual(new Set([0]));
    expect(blocks[0]).toEqual({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    const deltas = blocks.flatMap((e) => (e.type === 'content_block_delta' ? [e.delta] : []));
    expect(deltas.every((d) => d.type === 'text_delta')).toBe(true);
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.map((d) => (d.type === 'text_delta' ? d.text : '')).join('')).toBe(textOf(created));
    const delta = events.at(-2) as Anthropic.RawMessageDeltaEvent;
    expect(delta.delta).toMatchObject({ stop_reason: created.stop_reason, stop_sequence: null });
    expect(delta.usage.output_tokens).toBe(created.usage.output_tokens);
  });

  it('messages.stream gives the created message as its final message', async () => {
    const params = { model: MODEL, max_tokens: 24, ...GREEDY, messages: [{ role: 'user' as const, content: 'What is a river?' }] };
    const stream = anthropic.messages.stream(params);
    let text = '';
    stream.on('text', (t) => (text += t));
    const final = await stream.finalMessage();
    const created = await anthropic.messages.create(params);
    expect(final.content).toEqual(created.content);
    expect(text).toBe(textOf(created));
    expect([final.stop_reason, final.usage.output_tokens, promptOf(final.usage)]).toEqual([created.stop_reason, created.usage.output_tokens, promptOf(created.usage)]);
  });

  it('names every frame of the raw stream with an event line equal to its data’s type, pings included, and sends no [DONE]', async () => {
    const res = await fetch(`${server.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, max_tokens: 8, temperature: 0, stream: true, messages: [{ role: 'user', content: 'Hello!' }] }),
    });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(res.headers.get('request-id')).toBe(res.headers.get('x-request-id'));
    const text = await res.text();
    expect(text).not.toContain('[DONE]');
    const frames = text.split('\n\n').filter(Boolean).map((f) => f.split('\n'));
    for (const [event, data, ...rest] of frames) {
      expect(rest).toEqual([]);
      expect(event).toMatch(/^event: /);
      expect((JSON.parse(data!.slice('data: '.length)) as { type: string }).type).toBe(event!.slice('event: '.length));
    }
    const names = frames.map(([event]) => event!.slice('event: '.length));
    expect(names).toContain('ping');
    expect(names.filter((n) => n !== 'ping').join(' ')).toMatch(PUBLISHED_ORDER);
  });

  it('messages.countTokens gives the message’s prompt tokens, and chat’s, with a system prompt and tools too', async () => {
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'Count me, please.' }];
    const tools: Anthropic.Tool[] = [{ name: 'get_weather', description: 'The weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }];
    const counted = await anthropic.messages.countTokens({ model: MODEL, messages });
    const m = await anthropic.messages.create({ model: MODEL, max_tokens: 4, ...GREEDY, messages });
    const chat = await chatOf([{ role: 'user', content: 'Count me, please.' }], { max_tokens: 4 });
    expect(counted).toEqual({ input_tokens: promptOf(m.usage) });
    expect(counted.input_tokens).toBe(chat.usage!.prompt_tokens);

    const withTools = await anthropic.messages.countTokens({ model: MODEL, system: 'Be brief.', tools, messages });
    const used = await anthropic.messages.create({ model: MODEL, max_tokens: 4, ...GREEDY, system: 'Be brief.', tools, tool_choice: { type: 'none' }, messages });
    expect(withTools.input_tokens).toBe(promptOf(used.usage));
    expect(withTools.input_tokens).toBeGreaterThan(counted.input_tokens);
  });

  it('reports the prompt tokens read from the prefix cache as cache_read_input_tokens, and only the rest as input_tokens', async () => {
    const system = `You are a patient guide to the coast, run ${Date.now()}. `.repeat(6);
    const ask = (question: string) => anthropic.messages.create({ model: MODEL, max_tokens: 4, ...GREEDY, system, messages: [{ role: 'user', content: question }] });
    const cold = await ask('What is a tide?');
    const warm = await ask('What is a wave?');
    const counted = await anthropic.messages.countTokens({ model: MODEL, system, messages: [{ role: 'user', content: 'What is a wave?' }] });
    // The cold prompt shares no more than the template's opening with earlier ones; the warm one its whole system prompt.
    expect(cold.usage.cache_read_input_tokens).toBeLessThan(8);
    expect(warm.usage.cache_read_input_tokens).toBeGreaterThan(cold.usage.cache_read_input_tokens! + 40);
    expect(warm.usage.input_tokens).toBe(counted.input_tokens - warm.usage.cache_read_input_tokens!);
    const chat = await chatOf([{ role: 'system', content: system }, { role: 'user', content: 'What is a wave?' }], { max_tokens: 4 });
    expect(chat.usage!.prompt_tokens).toBe(counted.input_tokens);
  });

  it('models.list pages the chat models in Anthropic’s shape, and models.retrieve reads one', async () => {
    const chatModels = (await openai.models.list()).data.filter((m) => (m as { task?: string }).task === 'chat').map((m) => m.id);
    const page = await anthropic.models.list();
    expect(page.data.map((m) => m.id)).toEqual(chatModels);
    for (const m of page.data) {
      expect(Object.keys(m).sort()).toEqual(['created_at', 'display_name', 'id', 'type']);
      expect(m.type).toBe('model');
      expect(new Date(m.created_at).toISOString()).toBe(m.created_at);
    }
    const paged: string[] = [];
    for await (const m of anthropic.models.list({ limit: 1 })) paged.push(m.id);
    expect(paged).toEqual(chatModels);
    expect(await anthropic.models.retrieve(MODEL)).toMatchObject({ type: 'model', id: MODEL, display_name: 'tiny-chat' });
  });

  it('takes the key as x-api-key as well as a bearer token, and hands the request id to the SDK', async () => {
    const body = JSON.stringify({ model: MODEL, max_tokens: 4, temperature: 0, messages: [{ role: 'user', content: 'Hello!' }] });
    const viaHeader = await fetch(`${server.url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' }, body });
    const viaBearer = await fetch(`${server.url}/v1/messages`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body });
    expect([viaHeader.status, viaBearer.status]).toEqual([200, 200]);
    expect(((await viaHeader.json()) as Anthropic.Message).content).toEqual(((await viaBearer.json()) as Anthropic.Message).content);
    const { request_id } = await anthropic.messages.create({ model: MODEL, max_tokens: 4, messages: [{ role: 'user', content: 'Hello!' }] }).withResponse();
    expect(request_id).toMatch(/^req_/);
  });

  it('answers the beta namespace (anthropic-beta header, ?beta=true) as the plain one', async () => {
    const params = { model: MODEL, max_tokens: 16, ...GREEDY, messages: [{ role: 'user' as const, content: 'Hello!' }] };
    const beta = await anthropic.beta.messages.create({ ...params, betas: ['interleaved-thinking-2025-05-14'] });
    const plain = await anthropic.messages.create(params);
    expect(beta.content).toEqual(plain.content);
  });

  it('messages.parse with zodOutputFormat returns an answer the schema parses (output_config.format under the grammar)', async () => {
    // Enums and booleans: the SDK moves length and range limits into descriptions, which bound nothing.
    const Person = z.object({ role: z.enum(['admin', 'user', 'guest']), active: z.boolean() });
    const m = await anthropic.messages.parse({ model: MODEL, max_tokens: 200, ...GREEDY, messages: [{ role: 'user', content: 'Describe someone.' }], output_config: { format: zodOutputFormat(Person) } });
    expect(m.stop_reason).toBe('end_turn');
    expect(Person.parse(m.parsed_output)).toEqual(m.parsed_output);
  });
});
