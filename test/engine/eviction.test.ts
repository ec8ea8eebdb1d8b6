// Room for a load within --max-loaded-models: the least recently used idle model is unloaded
// first; a model busy with a request is never taken, so the request for another model waits for
// it to become idle, and gets model_not_ready with a retry-after once the load timeout passes.
import { afterEach, describe, expect, it } from 'vitest';
import type { EngineApi } from '../../src/engine/protocol.js';
import { chatRequest, loadsOf, onDemandEngine, stateOf, unloadsOf, until } from '../helpers/on-demand.js';

let engine: Required<EngineApi> | undefined;
afterEach(async () => {
  await engine?.dispose();
  engine = undefined;
});

const statuses = async (e: EngineApi) => Object.fromEntries((await e.models()).map((m) => [m.id, m.status]));

describe('eviction', () => {
  it('unloads the least recently used idle model to load another at max-loaded-models 1', async () => {
    engine = await onDemandEngine({ maxLoadedModels: 1 });
    await engine.generate(chatRequest('svc/chat-a'), () => {});
    expect(await statuses(engine)).toMatchObject({ 'svc/chat-a': 'ready', 'svc/chat-b': 'unloaded' });
    await engine.generate(chatRequest('svc/chat-b'), () => {});
    expect(await statuses(engine)).toMatchObject({ 'svc/chat-a': 'unloaded', 'svc/chat-b': 'ready' });
    expect(await unloadsOf(engine, 'svc/chat-a')).toEqual({ evicted: 1 });
    await engine.embed({ model: 'svc/embed', input: ['x'] });
    expect(await statuses(engine)).toEqual({ 'svc/chat-a': 'unloaded', 'svc/chat-b': 'unloaded', 'svc/embed': 'ready' });
  });

  it('picks the least recently used of two idle models at max-loaded-models 2', async () => {
    engine = await onDemandEngine({ maxLoadedModels: 2 });
    await engine.generate(chatRequest('svc/chat-a'), () => {});
    await engine.generate(chatRequest('svc/chat-b'), () => {});
    await engine.generate(chatRequest('svc/chat-a'), () => {}); // a is now the more recent
    await engine.embed({ model: 'svc/embed', input: ['x'] });
    expect(await statuses(engine)).toEqual({ 'svc/chat-a': 'ready', 'svc/chat-b': 'unloaded', 'svc/embed': 'ready' });
  });

  it('unloads idle models to keep the loaded estimates within memoryBudgetMb', async () => {
    engine = await onDemandEngine();
    const size = (await stateOf(engine, 'svc/chat-a')).size_mb!;
    await engine.dispose();
    engine = await onDemandEngine({ memoryBudgetMb: size * 1.5 }); // room for one chat model, not two
    await engine.generate(chatRequest('svc/chat-a'), () => {});
    await engine.generate(chatRequest('svc/chat-b'), () => {});
    expect(await statuses(engine)).toMatchObject({ 'svc/chat-a': 'unloaded', 'svc/chat-b': 'ready' });
    expect(await unloadsOf(engine, 'svc/chat-a')).toEqual({ evicted: 1 });
  });

  it('loads only the first max-loaded-models models of an eager start; the others wait unloaded for a request', async () => {
    engine = await onDemandEngine({ load: 'eager', maxLoadedModels: 2 });
    const atStart = await statuses(engine);
    expect(atStart['svc/embed']).toBe('unloaded');
    expect(['starting', 'ready']).toContain(atStart['svc/chat-a']);
    expect(['starting', 'ready']).toContain(atStart['svc/chat-b']);
    await until(engine, 'svc/chat-a', (m) => m.status === 'ready');
    await until(engine, 'svc/chat-b', (m) => m.status === 'ready');
    await engine.embed({ model: 'svc/embed', input: ['x'] });
    // One of the two idle chat models made room (neither has served a request: the first listed goes).
    const after = await statuses(engine);
    expect(after['svc/embed']).toBe('ready');
    expect([after['svc/chat-a'], after['svc/chat-b']].sort()).toEqual(['ready', 'unloaded']);
  });

  it('lets a stream in flight finish while the request for another model waits for its slot', async () => {
    engine = await onDemandEngine({ maxLoadedModels: 1 });
    const tokens: number[] = [];
    // Long enough that it is still decoding when b asks, on a fast machine too.
    const stream = engine.generate(chatRequest('svc/chat-a', {}, { max_tokens: 1500, ignore_eos: true }), (ev) => tokens.push(...ev.token_ids));
    await until(engine, 'svc/chat-a', (m) => m.status === 'ready');
    while (tokens.length === 0) await new Promise((r) => setTimeout(r, 5));
    const other = engine.generate(chatRequest('svc/chat-b'), () => {});
    await new Promise((r) => setTimeout(r, 20));
    expect(tokens.length).toBeLessThan(1500); // a is still decoding
    expect((await stateOf(engine, 'svc/chat-b')).status).toBe('unloaded'); // waiting: a is busy
    const a = await stream;
    expect(a.completion_tokens).toBe(1500);
    expect(a.finish_reason).toBe('length');
    const b = await other;
    expect(b.completion_tokens).toBeGreaterThan(0);
    expect(await loadsOf(engine, 'svc/chat-b')).toBe(1);
    expect(await unloadsOf(engine, 'svc/chat-a')).toEqual({ evicted: 1 });
  });

  it('answers model_not_ready with a retry-after when no slot frees within the load timeout', async () => {
    engine = await onDemandEngine({ maxLoadedModels: 1, loadTimeoutMs: 200 });
    const long = chatRequest('svc/chat-a', {}, { max_tokens: 2000, ignore_eos: true });
    const stream = engine.generate(long, () => {});
    await until(engine, 'svc/chat-a', (m) => m.status === 'ready');
    const started = Date.now();
    const err = await engine.generate(chatRequest('svc/chat-b'), () => {}).catch((e: unknown) => e);
    expect(Date.now() - started).toBeGreaterThanOrEqual(180);
    expect(err).toMatchObject({ code: 'model_not_ready' });
    expect((err as { retryAfter?: number }).retryAfter).toBeGreaterThan(0);
    expect((err as Error).message).toMatch(/busy/);
    await engine.cancel(long.id);
    await stream.catch(() => undefined);
  });
});
