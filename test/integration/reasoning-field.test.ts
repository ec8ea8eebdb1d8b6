// vLLM's `reasoning` beside Hearth's `reasoning_content` (issue 33 §3), over `hearth serve` with
// raw fetch: replies and stream deltas carry both with the same text, and an assistant turn sent
// back with either field is rendered as the same conversation.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { THINKING_REPLY } from '../../models/exports/thinking.js';
import { exportFixtures } from '../helpers/exports.js';
import { createKey, startServer, waitReady, type TestServer } from '../helpers/server.js';

const model = 'svc/qwen3-think-export';
const THINKING = THINKING_REPLY.thinking.trim();
let server: TestServer;
let key: string;

beforeAll(async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'hearth-reasoning-field-'));
  key = await createKey(dataDir);
  server = await startServer(['--models', join(await exportFixtures(), 'qwen3-think-export')], dataDir);
  await waitReady(server.url);
}, 120_000);

afterAll(async () => {
  expect(await server?.stop()).toBe(0);
});

const post = (path: string, body: unknown) =>
  fetch(`${server.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('the reasoning field over HTTP', () => {
  it('is in the reply beside reasoning_content, with the same text', async () => {
    const body = await (await post('/v1/chat/completions', { model, messages: [{ role: 'user', content: 'Hello there' }], temperature: 0 })).json();
    const message = body.choices[0].message;
    expect(message.reasoning_content).toBe(THINKING);
    expect(message.reasoning).toBe(THINKING);
  });

  it('is in every stream delta that carries reasoning_content, with the same text', async () => {
    const res = await post('/v1/chat/completions', { model, messages: [{ role: 'user', content: 'Hello there' }], temperature: 0, stream: true });
    const deltas = (await res.text())
      .split('\n\n')
      .filter((e) => e.startsWith('data: {'))
      .map((e) => JSON.parse(e.slice(6)).choices[0]?.delta ?? {});
    const thinking = deltas.filter((d) => d.reasoning_content);
    expect(thinking.length).toBeGreaterThan(1);
    for (const d of deltas) expect(d.reasoning ?? null).toEqual(d.reasoning_content ?? null);
    expect(thinking.map((d) => d.reasoning).join('').trim()).toBe(THINKING);
  });

  it('is taken on an assistant turn sent back, as reasoning_content is: the same prompt, which shows the thinking', async () => {
    // Qwen3's template shows the thinking of the turns after the last user message.
    const turn = (field?: 'reasoning' | 'reasoning_content') => [
      { role: 'user', content: 'Hello there' },
      { role: 'assistant', content: 'Hi.', ...(field ? { [field]: 'The user greets me.' } : {}) },
    ];
    const tokens = async (field?: 'reasoning' | 'reasoning_content') => (await (await post('/tokenize', { model, messages: turn(field) })).json()).tokens as number[];
    const [viaReasoning, viaContent, without] = [await tokens('reasoning'), await tokens('reasoning_content'), await tokens()];
    expect(viaReasoning).toEqual(viaContent);
    expect(viaReasoning.length).toBeGreaterThan(without.length);
    const res = await post('/v1/chat/completions', { model, messages: turn('reasoning'), temperature: 0, max_tokens: 4 });
    expect(res.status).toBe(200);
    expect((await res.json()).usage.prompt_tokens).toBe(viaReasoning.length);
  });
});
