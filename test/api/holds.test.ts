// The router holds each generating request's most possible cost before the engine sees
// it, and settles every hold exactly once: on success, failure, cancellation and a
// client that went away. Prices in the stub catalog: 0.1 in, 0.4 out per 1M tokens.
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
  it('holds the context-bounded most before the engine runs, then charges the real cost', async () => {
    const { access, engine, post } = setup();
    const res = await post('/v1/chat/completions', { ...chat, max_tokens: 10, n: 2 });
    expect(res.status).toBe(200);
    // Prompt at most 2048 - 10 tokens, once; two completions of at most 10.
    expect(access.holds[0]!.req.maxCostUsd).toBeCloseTo(usd(2038, 20), 15);
    // Once the engine reported the prompt's length (the stub's: 2 words + 4), the hold came down.
    expect(access.holds[0]!.lowered.at(-1)).toBeCloseTo(usd(6, 20), 15);
    expect(access.holds[0]!.settled).toBe(true);
    expect(engine.calls).toHaveLength(2);
    expect(access.records).toHaveLength(1);
    expect(access.records[0]!.usage.cost_usd).toBeLessThanOrEqual(access.holds[0]!.req.maxCostUsd);
  });

  it('holds the whole context without max_tokens, and token prompts by their exact length', async () => {
    const { access, post } = setup();
    await post('/v1/completions', { model: 'svc/tiny-chat', prompt: 'x' });
    expect(access.holds[0]!.req.maxCostUsd).toBeCloseTo(usd(1, 2047), 15);
    await post('/generate', { input_ids: [1, 2, 3], sampling_params: { max_new_tokens: 5 } });
    expect(access.holds[1]!.req.maxCostUsd).toBeCloseTo(usd(3, 5), 15);
    await post('/v1/embeddings', { model: 'svc/tiny-embed', input: ['a', 'b'] });
    expect(access.holds[2]!.req.maxCostUsd).toBeCloseTo(usd(2 * 512, 0), 15);
    expect(access.holds.every((h) => h.settled)).toBe(true);
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
