// Runs in the demo page (imported through Vite by the browser tests): an unmodified
// openai SDK and plain fetch against the page's own origin, which MSW's service
// worker answers in the tab.
import OpenAI from 'openai';
import type { Hearth } from '../../src/front/browser/index.js';

export interface Info {
  apiKey: string;
  baseURL: string;
}

/** The object startHearth resolved to: the demo's `window.hearth`. */
const hearth = () => (window as unknown as { hearth: Promise<Hearth> }).hearth;

const client = (info: Info, apiKey = info.apiKey) =>
  new OpenAI({ baseURL: `${location.origin}/v1`, apiKey, dangerouslyAllowBrowser: true, maxRetries: 0 });

const CHAT = [{ role: 'user' as const, content: 'Hello!' }];

/** Every endpoint once, greedy, as an application would call them. */
export async function sdkFlow(info: Info) {
  const sdk = client(info);
  const models = (await sdk.models.list()).data.map((m) => m.id);
  const chat = await sdk.chat.completions.create({ model: 'svc/tiny-chat', messages: CHAT, temperature: 0, max_tokens: 12 });
  const stream = await sdk.chat.completions.create({
    model: 'svc/tiny-chat',
    messages: CHAT,
    temperature: 0,
    max_tokens: 12,
    stream: true,
    stream_options: { include_usage: true },
  });
  let streamed = '';
  let chunks = 0;
  let finish: string | null = null;
  let usage: number | undefined;
  for await (const c of stream) {
    chunks++;
    streamed += c.choices[0]?.delta.content ?? '';
    finish = c.choices[0]?.finish_reason ?? finish;
    if (c.usage) usage = c.usage.completion_tokens;
  }
  const completion = await sdk.completions.create({ model: 'svc/tiny-chat', prompt: 'Once upon a time', max_tokens: 8, temperature: 0 });
  const emb = await sdk.embeddings.create({ model: 'svc/tiny-embed', input: ['The cat sat on the mat', 'A dog'] });
  const vec = emb.data[0]!.embedding;
  const generate = await fetch('/generate', {
    method: 'POST',
    headers: { authorization: `Bearer ${info.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ text: 'Once upon a time', sampling_params: { max_new_tokens: 8, temperature: 0 } }),
  });
  let unauthorized: { status?: number; code?: unknown } = {};
  try {
    await client(info, `svc_live_${'Z'.repeat(40)}`).models.list();
  } catch (e) {
    const err = e as { status?: number; code?: unknown };
    unauthorized = { status: err.status, code: err.code };
  }
  const health = await (await fetch('/health')).json();
  return {
    models,
    chat: { text: chat.choices[0]!.message.content, finish: chat.choices[0]!.finish_reason, usage: chat.usage },
    stream: { text: streamed, chunks, finish, usage },
    completion: completion.choices[0]!.text,
    embeddings: { count: emb.data.length, dim: vec.length, norm: Math.hypot(...vec) },
    generate: { status: generate.status, body: await generate.json() },
    unauthorized,
    health,
  };
}

/** Reads an SSE response, stamping each network chunk's arrival (ms since the request). */
async function stamped(res: Response, t0: number) {
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  const arrivals: { at: number; events: number }[] = [];
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const s = dec.decode(value, { stream: true });
    text += s;
    arrivals.push({ at: performance.now() - t0, events: (s.match(/^data: /gm) ?? []).length });
  }
  return { arrivals, text };
}

/** A long streamed /generate (ignore_eos): when did each piece arrive? */
export async function generateStreamTiming(info: Info, tokens: number) {
  const t0 = performance.now();
  const res = await fetch('/generate', {
    method: 'POST',
    headers: { authorization: `Bearer ${info.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      text: 'Once upon a time',
      stream: true,
      sampling_params: { max_new_tokens: tokens, temperature: 0, ignore_eos: true },
    }),
  });
  const { arrivals, text } = await stamped(res, t0);
  const events = text.split('\n\n').filter((e) => e.startsWith('data: {'));
  const last = JSON.parse(events.at(-1)!.slice(6)) as { meta_info: { completion_tokens: number } };
  return { status: res.status, arrivals, completionTokens: last.meta_info.completion_tokens, done: text.includes('data: [DONE]') };
}

/**
 * The SDK's chat stream, `runs` times: when each token reached the page from the engine
 * (production, as the page sees it) and when each content chunk reached the SDK's reader.
 */
export async function chatStreamTimings(info: Info, runs: number) {
  const engine = (await hearth()).runtime.engine;
  const generate = engine.generate;
  let produced: number[] = [];
  engine.generate = (req, onToken) =>
    generate.call(engine, req, (ev) => {
      produced.push(performance.now());
      onToken(ev);
    });
  try {
    const out: { produced: number[]; arrived: number[] }[] = [];
    for (let i = 0; i < runs; i++) {
      produced = [];
      const arrived: number[] = [];
      const stream = await client(info).chat.completions.create({ model: 'svc/tiny-chat', messages: CHAT, temperature: 0, stream: true });
      for await (const c of stream) if (c.choices[0]?.delta.content) arrived.push(performance.now());
      out.push({ produced, arrived });
    }
    return out;
  } finally {
    engine.generate = generate;
  }
}

/** A plain request, returning status and parsed body (for error checks). */
export async function post(info: Info, path: string, body: unknown) {
  const res = await fetch(path, {
    method: 'POST',
    headers: { authorization: `Bearer ${info.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, headers: Object.fromEntries(res.headers), body: json as Record<string, any> };
}

const CHAT_BODY = { model: 'svc/tiny-chat', messages: CHAT, temperature: 0 };

/** The engine worker dies while a long generation is in flight; then the next request. */
export async function crashDuringRequest(info: Info) {
  const handle = await hearth();
  const inflight = post(info, '/generate', {
    text: 'Once upon a time',
    sampling_params: { max_new_tokens: 1500, temperature: 0, ignore_eos: true },
  });
  await new Promise((r) => setTimeout(r, 500));
  const t0 = performance.now();
  await handle.__crashWorkerForTests();
  const failed = await inflight;
  const failedAfterMs = performance.now() - t0;
  const after = await post(info, '/v1/chat/completions', CHAT_BODY);
  return { failed, failedAfterMs, after };
}

export async function greedyChat(info: Info) {
  return post(info, '/v1/chat/completions', CHAT_BODY);
}

/**
 * Asks until the model answers, waiting what Retry-After says between tries as the openai
 * SDK does (polling faster ran into the key's rate limit on a slow load); records every 503
 * message seen meanwhile.
 */
export async function chatWhileLoading(info: Info) {
  const notReady: { message: string; retryAfter: string | undefined }[] = [];
  for (let i = 0; i < 600; i++) {
    const r = await post(info, '/v1/chat/completions', CHAT_BODY);
    if (r.status !== 503 && r.status !== 429) return { notReady, final: r };
    if (r.status === 503) notReady.push({ message: r.body.error.message, retryAfter: r.headers['retry-after'] });
    await new Promise((res) => setTimeout(res, (Number(r.headers['retry-after']) || 1) * 1000));
  }
  throw new Error('the model never became ready');
}

/** A long /generate stream; after its first piece `breakIt` runs; what the stream ends with. */
async function streamBrokenBy(info: Info, breakIt: () => Promise<void>) {
  const res = await fetch('/generate', {
    method: 'POST',
    headers: { authorization: `Bearer ${info.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ text: 'Once upon a time', stream: true, sampling_params: { max_new_tokens: 1500, temperature: 0, ignore_eos: true } }),
  });
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let text = dec.decode((await reader.read()).value, { stream: true });
  await breakIt();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    text += dec.decode(value, { stream: true });
  }
  const events = text.split('\n\n').filter((e) => e.startsWith('data: '));
  return { status: res.status, last: events.at(-1) ?? '', events: events.length };
}

/** svc/upstream (the demo's `?upstream=` model) through the page's SDK: a greedy reply and the same streamed. */
export async function upstreamChat(info: Info) {
  const sdk = client(info);
  const body = { model: 'svc/upstream', messages: CHAT, temperature: 0, max_tokens: 12 };
  for (let i = 0; ; i++) {
    // The page probes the upstream before it serves the model.
    const res = await post(info, '/v1/chat/completions', body);
    if (res.status === 200) break;
    if (i === 100) throw new Error(`svc/upstream never answered: ${JSON.stringify(res.body)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  const chat = await sdk.chat.completions.create(body);
  let streamed = '';
  let chunks = 0;
  for await (const c of await sdk.chat.completions.create({ ...body, stream: true })) {
    chunks++;
    streamed += c.choices[0]?.delta.content ?? '';
  }
  return { model: chat.model, text: chat.choices[0]!.message.content, streamed, chunks };
}

/** Structured outputs and tool calls in the tab: a json_schema reply, a required tool call, a streamed one. */
export async function structuredFlow(info: Info, schema: Record<string, unknown>, parameters: Record<string, unknown>) {
  const sdk = client(info);
  const messages = [{ role: 'user' as const, content: 'Weather in Paris?' }];
  const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters } }];
  const json = await sdk.chat.completions.create({
    model: 'svc/tiny-chat', messages, temperature: 0,
    response_format: { type: 'json_schema', json_schema: { name: 'person', schema, strict: true } },
  });
  const call = await sdk.chat.completions.create({ model: 'svc/tiny-chat', messages, tools, tool_choice: 'required', temperature: 0 });
  const stream = await sdk.chat.completions.create({ model: 'svc/tiny-chat', messages, tools, tool_choice: 'required', temperature: 0, stream: true });
  let args = '';
  let name: string | undefined;
  let finish: string | null = null;
  for await (const c of stream) {
    for (const t of c.choices[0]?.delta.tool_calls ?? []) {
      name ??= t.function?.name;
      args += t.function?.arguments ?? '';
    }
    finish = c.choices[0]?.finish_reason ?? finish;
  }
  const fn = call.choices[0]!.message.tool_calls?.[0];
  return {
    json: { text: json.choices[0]!.message.content, finish: json.choices[0]!.finish_reason },
    call: { name: fn?.type === 'function' ? fn.function.name : undefined, arguments: fn?.type === 'function' ? fn.function.arguments : undefined, finish: call.choices[0]!.finish_reason },
    stream: { name, arguments: args, finish },
  };
}


/** The engine worker dies while a stream is being read: what the stream ends with. */
export async function crashDuringStream(info: Info) {
  return streamBrokenBy(info, async () => (await hearth()).__crashWorkerForTests());
}

/** The engine's WebGPU device is destroyed while a stream is read: how the stream ends, then asks until served. */
export async function deviceLossDuringStream(info: Info) {
  const stream = await streamBrokenBy(info, async () => (await hearth()).__loseDeviceForTests!());
  // Until the new device and model are up, a request may still meet the old worker.
  const meanwhile: unknown[] = [];
  for (let i = 0; i < 200; i++) {
    const r = await greedyChat(info);
    if (r.status === 200) return { ...stream, meanwhile, after: r };
    meanwhile.push({ status: r.status, body: r.body });
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error('never served again after the device loss');
}
