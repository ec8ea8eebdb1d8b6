// The router holds each generating request's most possible cost before the engine sees
// it (its prompt as the engine counts it), and settles every hold exactly once: on
// success, failure, cancellation and a client that went away. Prices in the stub
// catalog: 0.1 in, 0.4 out per 1M tokens. The stub engine counts a word as a token,
// plus 4 a chat message.
import { describe, expect, it } from 'vitest';
import { EngineError } from '../../src/engine/errors.js';
import { setup } from './harness.js';

const usd = (inTokens: number, outTokens: number) => (inTokens * 0.1 + outTokens * 0.4) / 1e6;
const chat = { model: 'svc/tiny-chat', messages: [{ role: 'user', content: 'hi there' }] };

async function eventually(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(check()).toBe(true);
}

describe('holds on the spending cap', () => {
  it('holds the counted prompt and max_tokens × n before the engine runs, then charges the real cost', async () => {
    const { access, engine, post } = setup();
    const res = await post('/v1/chat/completions', { ...chat, max_tokens: 10, n: 2 });
    expect(res.status).toBe(200);
    // The prompt as the engine counted it before generating (2 words + 4), once; two completions of at most 10.
    expect(engine.countCalls).toMatchObject([{ model: 'svc/tiny-chat', prompts: [{ messages: chat.messages }] }]);
    expect(access.holds[0]!.req.maxCostUsd).toBeCloseTo(usd(6, 20), 15);
    expect(access.holds[0]!.settled).toBe(true);
    expect(engine.calls).toHaveLength(2);
    expect(access.records).toHaveLength(1);
    expect(access.records[0]!.usage.cost_usd).toBeLessThanOrEqual(access.holds[0]!.req.maxCostUsd);
  });

  it('holds the context the prompt leaves without max_tokens, and counts embedding inputs too', async () => {
    const { access, post } = setup();
    await post('/v1/completions', { model: 'svc/tiny-chat', prompt: 'x' });
    expect(access.holds[0]!.req.maxCostUsd).toBeCloseTo(usd(1, 2047), 15);
    await post('/generate', { input_ids: [1, 2, 3], sampling_params: { max_new_tokens: 5 } });
    expect(access.holds[1]!.req.maxCostUsd).toBeCloseTo(usd(3, 5), 15);
    await post('/v1/embeddings', { model: 'svc/tiny-embed', input: ['a', 'b'] });
    expect(access.holds[2]!.req.maxCostUsd).toBeCloseTo(usd(2, 0), 15);
    expect(access.holds.every((h) => h.settled)).toBe(true);
  });

  it('does not count the prompt of an account that is never capped', async () => {
    const { access, engine, post } = setup();
    access.principal.sandbox = false;
    expect((await post('/v1/chat/completions', { ...chat, max_tokens: 10 })).status).toBe(200);
    expect(engine.countCalls).toEqual([]);
    expect(access.records).toHaveLength(1);
  });

  it('tells the hold what a stream has delivered as it goes, and nothing for a reply sent whole', async () => {
    const { access, engine, post } = setup();
    engine.script = () => ({ tokens: ['a', 'b', 'c'], delayMs: 20 });
    await (await post('/v1/chat/completions', { ...chat, stream: true })).text();
    await post('/v1/chat/completions', chat);
    await eventually(() => access.holds.length === 2 && access.holds.every((h) => h.settled));
    // Each token 20 ms apart: the reader takes each event before the next is made, and the hold hears of each.
    expect(access.holds[0]!.delivered.map((u) => u.completion_tokens)).toEqual([1, 2, 3]);
    expect(access.holds[0]!.delivered.at(-1)).toMatchObject({ model: 'svc/tiny-chat', prompt_tokens: 6, completion_tokens: 3 });
    expect(access.holds[0]!.delivered.at(-1)!.cost_usd).toBeCloseTo(usd(6, 3), 15);
    expect(access.holds[1]!.delivered).toEqual([]);
  });

  it('settles (charging nothing) when the engine refuses the request, streamed or not', async () => {
    const { access, engine, post } = setup();
    engine.script = () => ({ error: new EngineError('context_length_exceeded', 'too long', 'messages') });
    expect((await post('/v1/chat/completions', chat)).status).toBe(400);
    expect((await post('/v1/chat/completions', { ...chat, stream: true })).status).toBe(400);
    expect(access.holds.map((h) => h.settled)).toEqual([true, true]);
    expect(access.records).toHaveLength(0);
  });

  it('settles a stream that fails midway, charging what it produced', async () => {
    const { access, engine, post } = setup();
    engine.script = () => ({ tokens: ['a', 'b', 'c', 'd'], failAfter: 2 });
    const res = await post('/v1/chat/completions', { ...chat, stream: true });
    expect(await res.text()).toContain('"error"');
    await eventually(() => access.holds[0]!.settled);
    expect(access.records[0]!.usage.completion_tokens).toBe(2);
  });

  it('settles when the client goes away mid-stream', async () => {
    const { access, engine, post } = setup();
    engine.script = () => ({ tokens: Array.from({ length: 50 }, () => 'x'), delayMs: 20 });
    const ctl = new AbortController();
    const res = await post('/v1/chat/completions', { ...chat, stream: true }, {}, ctl.signal);
    const reader = res.body!.getReader();
    await reader.read();
    await reader.read();
    await reader.cancel();
    ctl.abort();
    await eventually(() => access.holds[0]!.settled);
    const charged = access.records[0]?.usage.completion_tokens ?? 0;
    expect(charged).toBeGreaterThan(0);
    expect(charged).toBeLessThan(50);
  });
});
