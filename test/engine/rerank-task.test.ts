// The rerank task in the engine: only rerank models score pairs, and they do nothing else; each
// refusal is the engine's unsupported_task naming the model's task (the api answers 400 with it).
// A folder is served as rerank only with a one-label classification head and an activation
// Hearth applies; otherwise it fails at load, saying why.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeBackend } from '../../src/backends/node.js';
import { createEngine } from '../../src/engine/engine.js';
import type { CatalogEntry, EngineApi, ModelState } from '../../src/engine/protocol.js';
import { entryFromFolder } from '../../src/ops/checkpoints.js';
import { greedy } from '../helpers/engine-on.js';
import { exportFixtures } from '../helpers/exports.js';

let dir: string;
let tmp: string;
let engine: EngineApi;
const price = { input_per_1m: 0, output_per_1m: 0 };
const entry = (id: string, task: CatalogEntry['task'], source: string): CatalogEntry => ({ id, task, class: 't', context_length: 512, source, price });

beforeAll(async () => {
  dir = await exportFixtures();
  tmp = mkdtempSync(join(tmpdir(), 'hearth-rerank-'));
  // ms-marco's export with an activation sentence-transformers could name but Hearth does not apply.
  cpSync(join(dir, 'ms-marco-export'), join(tmp, 'relu'), { recursive: true });
  const config = JSON.parse(readFileSync(join(tmp, 'relu', 'config.json'), 'utf8'));
  writeFileSync(join(tmp, 'relu', 'config.json'), JSON.stringify({ ...config, sbert_ce_default_activation_function: 'torch.nn.modules.activation.ReLU' }));
  engine = createEngine(nodeBackend('cpu'));
  await engine.load([
    entry('svc/tiny-chat', 'chat', join(dir, 'tiny-chat')),
    entry('svc/tiny-embed', 'embedding', join(dir, 'tiny-embed')),
    entry('svc/tiny-rerank', 'rerank', join(dir, 'tiny-rerank')),
    entry('svc/embed-as-rerank', 'rerank', join(dir, 'tiny-embed')),
    entry('svc/relu', 'rerank', join(tmp, 'relu')),
    entry('svc/rerank-as-embed', 'embedding', join(dir, 'tiny-rerank')),
  ]);
  for (let i = 0; i < 400 && (await engine.models()).some((m) => m.status === 'starting'); i++) await new Promise((r) => setTimeout(r, 50));
}, 120_000);
afterAll(async () => {
  await engine?.dispose();
  rmSync(tmp, { recursive: true, force: true });
});

const state = async (id: string): Promise<ModelState> => (await engine.models()).find((m) => m.id === id)!;
const refusal = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e as { code: string; message: string; param: string });

describe('the rerank task', () => {
  it('lists a ready cross-encoder with task rerank', async () => {
    expect(await state('svc/tiny-rerank')).toMatchObject({ task: 'rerank', status: 'ready', context_length: 512 });
  });

  it('refuses pairs for a chat or an embedding model, naming its task', async () => {
    for (const [model, task] of [['svc/tiny-chat', 'chat'], ['svc/tiny-embed', 'embedding']]) {
      const e = await refusal(engine.score({ model: model!, pairs: [['q', 'd']] }));
      expect(e, model).toMatchObject({ code: 'unsupported_task', param: 'model' });
      expect(e!.message).toContain(`${task === 'embedding' ? 'an' : 'a'} ${task} model`);
    }
  });

  it('refuses embeddings and generations from a rerank model, naming its task', async () => {
    const embed = await refusal(engine.embed({ model: 'svc/tiny-rerank', input: ['text'] }));
    const generate = await refusal(engine.generate({ id: 'g', model: 'svc/tiny-rerank', prompt: { text: 'hi' }, sampling: greedy(4) }, () => undefined));
    for (const e of [embed, generate]) {
      expect(e).toMatchObject({ code: 'unsupported_task', param: 'model' });
      expect(e!.message).toContain('is a rerank model');
    }
  });

  it('answers an empty list of pairs with no scores and no tokens', async () => {
    expect(await engine.score({ model: 'svc/tiny-rerank', pairs: [] })).toEqual({ scores: [], prompt_tokens: 0 });
  });

  it('fails a rerank entry whose folder has no classification head, saying what it needs', async () => {
    const m = await state('svc/embed-as-rerank');
    expect(m.status).toBe('failed');
    expect(m.detail).toContain('one-label *ForSequenceClassification head');
  });

  it('fails a cross-encoder served as an embedding model, saying it serves rerank', async () => {
    const m = await state('svc/rerank-as-embed');
    expect(m.status).toBe('failed');
    expect(m.detail).toContain('BertForSequenceClassification head: it serves rerank, not embedding');
  });

  it('fails a cross-encoder whose config names an activation Hearth does not apply, naming it', async () => {
    const m = await state('svc/relu');
    expect(m.status).toBe('failed');
    expect(m.detail).toContain('torch.nn.modules.activation.ReLU');
  });

  it('takes a cross-encoder folder added without a task as rerank', async () => {
    const e = await entryFromFolder({ id: 'svc/added', from: join(dir, 'bge-reranker-export') }, join(dir, 'bge-reranker-export'));
    expect(e).toMatchObject({ task: 'rerank', context_length: 512 });
  });
});
