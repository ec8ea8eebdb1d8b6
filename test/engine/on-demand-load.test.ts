// On-demand loading in the engine, on the real fixtures: every model starts unloaded, the
// first request loads its model and is served, concurrent requests share one load, and a model
// unloaded and loaded again answers as before.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineApi } from '../../src/engine/protocol.js';
import { chatRequest, loadsOf, onDemandEngine, stateOf } from '../helpers/on-demand.js';

let engine: Required<EngineApi>;
beforeAll(async () => {
  engine = await onDemandEngine();
});
afterAll(() => engine.dispose());

describe('on-demand loading', () => {
  it('starts with every model unloaded, each with its size estimate and no expiry', async () => {
    const models = await engine.models();
    expect(models.map((m) => m.status)).toEqual(['unloaded', 'unloaded', 'unloaded']);
    for (const m of models) {
      expect(m.expires_at).toBeNull();
      expect(m.size_mb).toBeGreaterThan(0);
    }
    expect(await loadsOf(engine, 'svc/chat-a')).toBe(0);
  });

  it('serves a first request by loading its model, and four concurrent ones share one load', async () => {
    const results = await Promise.all([0, 1, 2, 3].map(() => engine.generate(chatRequest('svc/chat-a'), () => {})));
    for (const r of results) expect(r.completion_tokens).toBeGreaterThan(0);
    expect(new Set(results.map((r) => r.text)).size).toBe(1);
    expect(await loadsOf(engine, 'svc/chat-a')).toBe(1);
    expect((await stateOf(engine, 'svc/chat-a')).status).toBe('ready');
    // The other models were never asked for.
    expect((await stateOf(engine, 'svc/chat-b')).status).toBe('unloaded');
  });

  it('answers with the same greedy text after an unload and a reload', async () => {
    const before = await engine.generate(chatRequest('svc/chat-a'), () => {});
    const unloaded = await engine.unloadModel('svc/chat-a');
    expect(unloaded.status).toBe('unloaded');
    const after = await engine.generate(chatRequest('svc/chat-a'), () => {});
    expect(after.text).toBe(before.text);
    expect(after.token_ids).toEqual(before.token_ids);
    expect(await loadsOf(engine, 'svc/chat-a')).toBe(2);
  });

  it('loads an embedder on its first request too', async () => {
    const r = await engine.embed({ model: 'svc/embed', input: ['hello'] });
    expect(r.data[0]!.length).toBe(1536);
    expect((await stateOf(engine, 'svc/embed')).status).toBe('ready');
  });
});
