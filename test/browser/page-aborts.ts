// Runs in the demo page: a user's stop, as each client makes it, against the page's own
// origin (answered in the tab). Its own module, so only the suite that calls it makes Vite
// bundle the AI SDK (startDemo's pageDeps).
import OpenAI from 'openai';
import type { Hearth } from '../../src/front/browser/index.js';
import type { Info } from './page-client.js';

const LONG = { text: 'Once upon a time', stream: true, sampling_params: { max_new_tokens: 1500, temperature: 0, ignore_eos: true } };
const CHAT = { model: 'svc/tiny-chat', messages: [{ role: 'user' as const, content: 'Hello!' }], temperature: 0, max_tokens: 1500 };

/** The object startHearth resolved to (older demos kept it on window.__hearth). */
const hearth = async (): Promise<Hearth> => {
  const w = window as unknown as { hearth: Promise<Hearth>; __hearth?: Hearth };
  const h = await w.hearth;
  return w.__hearth ?? h;
};

async function decodeSteps(): Promise<{ active: number; steps: number }> {
  const stats = await (await hearth()).runtime.engine.stats!();
  const m = stats.models.find((s) => s.id === 'svc/tiny-chat')!;
  return { active: m.active, steps: m.decode_steps ?? 0 };
}

/** After an abort: the engine's decode steps stop growing and nothing is left running. */
async function stopped() {
  await new Promise((r) => setTimeout(r, 300));
  const at = await decodeSteps();
  await new Promise((r) => setTimeout(r, 1000));
  const later = await decodeSteps();
  return { active: later.active, stepsAfterAbort: later.steps - at.steps };
}

const errorOf = (e: unknown) => ({ name: (e as Error).name, ctor: (e as object).constructor.name, message: String((e as Error).message) });

/** Raw fetch of a long /generate stream, aborted after three reads. */
export async function rawFetchAbort(info: Info) {
  const ac = new AbortController();
  const res = await fetch('/generate', {
    method: 'POST',
    headers: { authorization: `Bearer ${info.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(LONG),
    signal: ac.signal,
  });
  const reader = res.body!.getReader();
  for (let i = 0; i < 3; i++) await reader.read();
  ac.abort();
  let rejected: ReturnType<typeof errorOf> | undefined;
  let reads = 0;
  try {
    for (;;) {
      const { done } = await reader.read();
      if (done) break;
      reads++;
    }
  } catch (e) {
    rejected = errorOf(e);
  }
  return { rejected, readsAfterAbort: reads, ...(await stopped()) };
}

/** The openai SDK, its request option `signal` aborted: a reply awaited throws
 * APIUserAbortError; a stream being read stops (the SDK ends its iterator quietly on abort). */
export async function sdkAbort(info: Info) {
  const sdk = new OpenAI({ baseURL: `${location.origin}/v1`, apiKey: info.apiKey, dangerouslyAllowBrowser: true, maxRetries: 0 });
  const whole = new AbortController();
  const pending = sdk.chat.completions.create({ ...CHAT, ignore_eos: true } as typeof CHAT, { signal: whole.signal });
  setTimeout(() => whole.abort(), 300);
  let thrown: ReturnType<typeof errorOf> | undefined;
  try {
    await pending;
  } catch (e) {
    thrown = errorOf(e);
  }
  const afterWhole = await stopped();

  const streamed = new AbortController();
  const stream = await sdk.chat.completions.create({ ...CHAT, stream: true, ignore_eos: true } as typeof CHAT & { stream: true }, { signal: streamed.signal });
  let chunks = 0;
  for await (const _ of stream) {
    if (++chunks === 3) streamed.abort();
  }
  return { thrown, afterWhole, chunks, afterStream: await stopped() };
}

/** The AI SDK's streamText with an abortSignal that fires after a few parts. */
export async function aiSdkAbort(info: Info) {
  const [{ createOpenAICompatible }, { streamText }] = await Promise.all([import('@ai-sdk/openai-compatible'), import('ai')]);
  const model = createOpenAICompatible({ name: 'hearth', baseURL: `${location.origin}/v1`, apiKey: info.apiKey }).chatModel('svc/tiny-chat');
  const ac = new AbortController();
  const result = streamText({ model, prompt: 'Hello!', temperature: 0, maxOutputTokens: 1500, abortSignal: ac.signal, maxRetries: 0 });
  const parts: string[] = [];
  let deltas = 0;
  let thrown: ReturnType<typeof errorOf> | undefined;
  try {
    for await (const part of result.fullStream) {
      parts.push(part.type);
      if (part.type === 'text-delta' && ++deltas === 3) ac.abort();
    }
  } catch (e) {
    thrown = errorOf(e);
  }
  return { thrown, aborted: parts.includes('abort'), finished: parts.includes('finish'), ...(await stopped()) };
}

/** What the next request gets right after. */
export async function nextChat(info: Info) {
  const sdk = new OpenAI({ baseURL: `${location.origin}/v1`, apiKey: info.apiKey, dangerouslyAllowBrowser: true, maxRetries: 0 });
  const r = await sdk.chat.completions.create({ ...CHAT, max_tokens: 8 });
  return { finish: r.choices[0]!.finish_reason, tokens: r.usage!.completion_tokens };
}
