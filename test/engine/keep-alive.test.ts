// Keep-alive in the engine: an idle model unloads once the server's keep-alive has passed after
// its last request, a request's own keep_alive overrides it (0: unload as soon as it ends, -1:
// keep), and expires_at says when.
import { afterEach, describe, expect, it } from 'vitest';
import type { EngineApi } from '../../src/engine/protocol.js';
import { chatRequest, onDemandEngine, stateOf, unloadsOf, until } from '../helpers/on-demand.js';

let engine: Required<EngineApi> | undefined;
afterEach(async () => {
  await engine?.dispose();
  engine = undefined;
});

describe('keep-alive', () => {
  it('unloads an idle model once the server keep-alive has passed after its last request', async () => {
    engine = await onDemandEngine({ keepAliveMs: 400 });
    const asked = Date.now();
    await engine.generate(chatRequest('svc/chat-a'), () => {});
    const loaded = await stateOf(engine, 'svc/chat-a');
    expect(loaded.status).toBe('ready');
    expect(loaded.expires_at).toBeGreaterThanOrEqual(Math.floor(asked / 1000));
    expect(loaded.expires_at).toBeLessThanOrEqual(Math.ceil((Date.now() + 400) / 1000));
    const gone = await until(engine, 'svc/chat-a', (m) => m.status === 'unloaded', 5_000);
    expect(gone.expires_at).toBeNull();
    expect(await unloadsOf(engine, 'svc/chat-a')).toEqual({ idle: 1 });
  });

  it('unloads a model an eager start loaded once the keep-alive passes with no request', async () => {
    engine = await onDemandEngine({ load: 'eager', keepAliveMs: 300 });
    await until(engine, 'svc/chat-a', (m) => m.status === 'ready');
    expect((await stateOf(engine, 'svc/chat-a')).expires_at).not.toBeNull();
    await until(engine, 'svc/chat-a', (m) => m.status === 'unloaded', 5_000);
    expect(await unloadsOf(engine, 'svc/chat-a')).toEqual({ idle: 1 });
  });

  it('unloads the model as soon as a request with keep_alive 0 ends', async () => {
    engine = await onDemandEngine({ keepAliveMs: -1 });
    await engine.generate(chatRequest('svc/chat-a', { keep_alive_ms: 0 }), () => {});
    await until(engine, 'svc/chat-a', (m) => m.status === 'unloaded', 2_000);
    expect(await unloadsOf(engine, 'svc/chat-a')).toEqual({ keep_alive: 1 });
  });

  it('keeps a model with keep_alive -1 however short the server keep-alive, with no expiry', async () => {
    engine = await onDemandEngine({ keepAliveMs: 100 });
    await engine.generate(chatRequest('svc/chat-a', { keep_alive_ms: -1 }), () => {});
    await new Promise((r) => setTimeout(r, 400));
    const m = await stateOf(engine, 'svc/chat-a');
    expect(m.status).toBe('ready');
    expect(m.expires_at).toBeNull();
  });

  it('never unloads a model under a request in flight: expires_at is null while it runs', async () => {
    engine = await onDemandEngine({ keepAliveMs: 50 });
    let produced = 0;
    const long = engine.generate(chatRequest('svc/chat-a', {}, { max_tokens: 1500, ignore_eos: true }), (ev) => (produced += ev.token_ids.length));
    while (produced < 20) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 100)); // twice the keep-alive, mid-stream
    const running = await stateOf(engine, 'svc/chat-a');
    expect(produced).toBeLessThan(1500);
    expect(running).toMatchObject({ status: 'ready', expires_at: null });
    expect((await long).completion_tokens).toBe(1500);
    await until(engine, 'svc/chat-a', (m) => m.status === 'unloaded', 5_000);
  });
});
