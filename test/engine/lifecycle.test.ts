// Model operations on the engine in-process, on the real fixtures: add, redeploy
// (in-flight work finishes on the old instance), remove, and checkpoint validation.
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeBackend } from '../../src/backends/node.js';
import { createEngine } from '../../src/engine/engine.js';
import { CheckpointError, validateCheckpoint } from '../../src/engine/models/files.js';
import type { CatalogEntry, EngineApi, GenerateRequest, ModelState, SamplingParams } from '../../src/engine/protocol.js';
import { fixtures } from '../helpers/fixtures.js';

const price = { input_per_1m: 0.1, output_per_1m: 0.4 };
const sampling: SamplingParams = {
  temperature: 0, top_p: 1, top_k: -1, min_p: 0, presence_penalty: 0, frequency_penalty: 0,
  stop: [], stop_token_ids: [], ignore_eos: false, logprobs: -1,
};
let dir: string;
let engine: Required<EngineApi>;
let n = 0;
const req = (model: string, extra: Partial<SamplingParams> = {}): GenerateRequest => ({
  id: `g${n++}`,
  model,
  prompt: { messages: [{ role: 'user', content: 'Hello there' }] },
  sampling: { ...sampling, ...extra },
});

async function until(id: string, ok: (m: ModelState | undefined) => boolean, ms = 20_000): Promise<ModelState | undefined> {
  const end = Date.now() + ms;
  for (;;) {
    const m = (await engine.models()).find((x) => x.id === id);
    if (ok(m)) return m;
    if (Date.now() > end) throw new Error(`timed out; last state ${JSON.stringify(m)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const chat = (id: string, source: string): CatalogEntry => ({ id, task: 'chat', class: 'tiny', context_length: 2048, source, price });

beforeAll(async () => {
  dir = await fixtures();
  engine = createEngine(nodeBackend('cpu')) as Required<EngineApi>;
  await engine.load([chat('svc/tiny-chat', join(dir, 'tiny-chat'))]);
  await until('svc/tiny-chat', (m) => m?.status === 'ready');
});
afterAll(() => engine.dispose());

describe('engine model operations', () => {
  it('adds a model at run time: starting, then ready and serving', async () => {
    const state = await engine.add(chat('svc/second', join(dir, 'tiny-chat')));
    expect(state).toMatchObject({ id: 'svc/second', status: 'starting' });
    await until('svc/second', (m) => m?.status === 'ready');
    const r = await engine.generate(req('svc/second'), () => {});
    expect(r.completion_tokens).toBeGreaterThan(0);
    await expect(engine.add(chat('svc/second', join(dir, 'tiny-chat')))).rejects.toMatchObject({ code: 'invalid_value' });
  });

  it('redeploys: new requests are refused with model_not_ready while the in-flight one finishes on the old instance', async () => {
    const tokens: number[] = [];
    const inFlight = engine.generate(req('svc/tiny-chat', { max_tokens: 400, ignore_eos: true }), (ev) => tokens.push(...ev.token_ids));
    while (tokens.length < 2) await new Promise((r) => setTimeout(r, 5));
    const state = await engine.redeploy('svc/tiny-chat');
    expect(state.status).toBe('redeploying');
    await expect(engine.generate(req('svc/tiny-chat'), () => {})).rejects.toMatchObject({ code: 'model_not_ready' });
    const done = await inFlight;
    expect(done.finish_reason).toBe('length');
    expect(done.completion_tokens).toBe(400);
    await until('svc/tiny-chat', (m) => m?.status === 'ready');
    const again = await engine.generate(req('svc/tiny-chat'), () => {});
    expect(again.completion_tokens).toBeGreaterThan(0);
  });

  it('a redeploy that fails to load keeps the previous instance serving, and says why', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'hearth-empty-'));
    await engine.redeploy('svc/second', chat('svc/second', empty));
    const m = await until('svc/second', (x) => x?.status === 'ready' && !!x.detail);
    expect(m!.detail).toMatch(/redeploy failed.*config\.json is missing/);
    expect((await engine.generate(req('svc/second'), () => {})).completion_tokens).toBeGreaterThan(0);
  });

  it('removes a model: gone from models() at once, in-flight work still finishes', async () => {
    // Removed once the request is surely in flight (its first token out), not after a guessed delay.
    let started!: () => void;
    const first = new Promise<void>((r) => (started = r));
    const inFlight = engine.generate(req('svc/second', { max_tokens: 50, ignore_eos: true }), () => started());
    await Promise.race([first, inFlight]); // a refusal fails the test at once
    const removing = engine.remove('svc/second');
    expect((await engine.models()).map((m) => m.id)).not.toContain('svc/second');
    await expect(engine.generate(req('svc/second'), () => {})).rejects.toMatchObject({ code: 'model_not_found' });
    expect((await inFlight).completion_tokens).toBe(50);
    await removing;
    await expect(engine.remove('svc/second')).rejects.toMatchObject({ code: 'model_not_found' });
  });

  it('reports a model that cannot load as failed, naming what is missing', async () => {
    const broken = await mkdtemp(join(tmpdir(), 'hearth-broken-'));
    await cp(join(dir, 'tiny-chat'), broken, { recursive: true });
    await rm(join(broken, 'tokenizer.json'));
    await engine.add(chat('svc/broken', broken));
    const m = await until('svc/broken', (x) => x?.status === 'failed');
    expect(m!.detail).toContain('tokenizer.json is missing');
    await engine.remove('svc/broken');
  });

  it('reports active and queued sequences per model in stats()', async () => {
    const s = await engine.stats();
    expect(s.models.find((m) => m.id === 'svc/tiny-chat')).toMatchObject({
      active: 0,
      queued: 0,
      kv_cache_bytes: expect.any(Number),
      kv_cache_capacity_bytes: 256 * 2 ** 20,
    });
  });
});

describe('validateCheckpoint', () => {
  const fsReader = nodeBackend('cpu');

  it('accepts the fixtures and infers task, context length and size class', async () => {
    expect(await validateCheckpoint(fsReader, join(dir, 'tiny-chat'))).toMatchObject({
      model_type: 'llama', task: 'chat', context_length: 2048, onnx: ['onnx/model.onnx'],
    });
    expect(await validateCheckpoint(fsReader, join(dir, 'tiny-embed'))).toMatchObject({ model_type: 'bert', task: 'embedding' });
  });

  it('names every missing file, and an unsupported model_type', async () => {
    const f = await mkdtemp(join(tmpdir(), 'hearth-ckpt-'));
    const err = await validateCheckpoint(fsReader, f).catch((e) => e);
    expect(err).toBeInstanceOf(CheckpointError);
    expect(err.problems).toEqual([
      'config.json is missing',
      'tokenizer.json is missing',
      'tokenizer_config.json is missing',
      'no ONNX model: expected onnx/model.onnx or onnx/model_<dtype>.onnx',
    ]);
    await cp(join(dir, 'tiny-chat'), f, { recursive: true });
    await writeFile(join(f, 'config.json'), JSON.stringify({ model_type: 't5' }));
    const bad = await validateCheckpoint(fsReader, f).catch((e) => e);
    expect(bad.message).toMatch(/model_type "t5" is not supported/);
    await writeFile(join(f, 'config.json'), JSON.stringify({ model_type: 'llama' }));
    const q4 = await validateCheckpoint(fsReader, f, { entry: { id: 'svc/x', task: 'chat', dtype: { cpu: 'q4' } }, device: 'cpu' }).catch((e) => e);
    expect(q4.problems).toEqual(['onnx/model_q4.onnx is missing (dtype "q4" for cpu); the folder has dtypes: fp32']);
  });
});

describe('cancelling on a model being removed', () => {
  it('still reaches a request in flight on a model that is being removed', async () => {
    await engine.add(chat('svc/going', join(dir, 'tiny-chat')));
    await until('svc/going', (m) => m?.status === 'ready');
    const r = req('svc/going', { max_tokens: 1500, ignore_eos: true });
    const tokens: number[] = [];
    const inFlight = engine.generate(r, (ev) => tokens.push(...ev.token_ids));
    while (tokens.length < 2) await new Promise((res) => setTimeout(res, 5));
    const removing = engine.remove('svc/going');
    await engine.cancel(r.id);
    await expect(inFlight).rejects.toMatchObject({ code: 'cancelled' });
    await removing;
    expect(tokens.length).toBeLessThan(1500);
  });
});
