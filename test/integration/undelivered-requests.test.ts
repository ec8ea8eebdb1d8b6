// Nothing is run or charged for what never arrived or was never received: a request whose
// body is cut short (its Content-Length promised more) is refused before any inference, and
// a non-streamed reply whose client went away before it was sent is not charged. A real
// server, a raw socket for the lying upload, the usage ledger read with `hearth usage`.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawExchange } from '../helpers/raw-http.js';
import { hearth, startSdkServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
let key: string;
let client: OpenAI;

beforeAll(async () => {
  ({ server, key, client } = await startSdkServer('hearth-undelivered-'));
}, 120_000);

afterAll(async () => {
  await server?.stop();
});

async function requestsCharged(): Promise<number> {
  const rows = JSON.parse(await hearth(['usage', '--json', '--data-dir', server.dataDir])) as { requests: number }[];
  return rows.reduce((n, r) => n + r.requests, 0);
}

describe('what never arrived or was never received', () => {
  it('refuses a body cut short of its Content-Length and charges nothing for it', async () => {
    const before = await requestsCharged();
    const body = JSON.stringify({ model: 'svc/tiny-chat', messages: [{ role: 'user', content: 'Hello!' }], temperature: 0 });
    const head =
      `POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body) + 100}\r\n\r\n`;
    const port = Number(new URL(server.url).port);
    expect(await rawExchange(port, [head, body, { delayMs: 1000 }], { abort: true })).toBe('aborted');
    await new Promise((r) => setTimeout(r, 500));
    expect(await requestsCharged()).toBe(before);
    expect(server.output()).not.toMatch(/"status":200[^\n]*chat\/completions|chat\/completions[^\n]*"status":200/);
  });

  it('does not charge a non-streamed reply whose client went away before it was sent', async () => {
    const before = await requestsCharged();
    const ac = new AbortController();
    const pending = client.chat.completions.create(
      { model: 'svc/tiny-chat', messages: [{ role: 'user', content: 'Tell me a long story.' }], max_tokens: 1500, ignore_eos: true } as OpenAI.ChatCompletionCreateParamsNonStreaming,
      { signal: ac.signal },
    );
    setTimeout(() => ac.abort(), 300);
    await expect(pending).rejects.toThrow();
    await new Promise((r) => setTimeout(r, 1000));
    expect(await requestsCharged()).toBe(before);
    // A reply that is received is charged as before.
    await client.chat.completions.create({ model: 'svc/tiny-chat', messages: [{ role: 'user', content: 'Hello!' }], max_tokens: 8 });
    expect(await requestsCharged()).toBe(before + 1);
  });
});
