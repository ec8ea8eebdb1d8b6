// A rerank of hundreds of documents runs in bounded micro-batches (src/engine/score-batches.ts),
// never as one padded batch of every pair: the cross-encoder's graph runs are recorded through
// the engine, each within the rows and padded tokens of EMBED_BATCH, and the scores come back in
// the pairs' order, each equal to that pair scored alone.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeBackend } from '../../src/backends/node.js';
import type { Backend, InferenceSession } from '../../src/backends/types.js';
import { EMBED_BATCH } from '../../src/engine/embed-batches.js';
import { createEngine } from '../../src/engine/engine.js';
import type { EngineApi } from '../../src/engine/protocol.js';
import { CORPUS } from '../../models/tokenizer/corpus.js';
import { fixtures } from '../helpers/fixtures.js';

/** The input_ids shapes of every graph run, [rows, width]. */
const runs: number[][] = [];

/** The CPU backend, every session's runs recorded. */
function watchedBackend(): Backend {
  const inner = nodeBackend('cpu');
  return Object.assign(Object.create(inner) as Backend, {
    async createSession(...args: Parameters<Backend['createSession']>): Promise<InferenceSession> {
      const session = await inner.createSession(...args);
      return new Proxy(session, {
        get(target, prop) {
          if (prop === 'run') {
            return (feeds: Record<string, { dims: readonly number[] }>, ...rest: unknown[]) => {
              runs.push([...feeds.input_ids!.dims]);
              return (target.run as (...a: unknown[]) => unknown).call(target, feeds, ...rest);
            };
          }
          const v = Reflect.get(target, prop, target) as unknown;
          return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
        },
      });
    },
  });
}

let engine: EngineApi;
const MODEL = 'svc/tiny-rerank';

beforeAll(async () => {
  engine = createEngine(watchedBackend());
  await engine.load([{ id: MODEL, task: 'rerank', class: 't', context_length: 512, source: join(await fixtures(), 'tiny-rerank'), price: { input_per_1m: 0, output_per_1m: 0 } }]);
  for (let i = 0; i < 200 && (await engine.models())[0]!.status === 'starting'; i++) await new Promise((r) => setTimeout(r, 50));
  expect((await engine.models())[0]!.status).toBe('ready');
}, 60_000);
afterAll(() => engine?.dispose());

describe('a rerank of 300 documents', () => {
  it('runs in micro-batches within the rows and padded tokens of a batch, scores in the pairs’ order', async () => {
    // Documents of 1 to 60 words, in a shuffled order of lengths; some over the token bound's share.
    const words = CORPUS.split(/\s+/);
    const docs = Array.from({ length: 300 }, (_, i) => words.slice(i % 50, (i % 50) + 1 + ((i * 37) % 60)).join(' '));
    runs.length = 0;
    const { scores, prompt_tokens } = await engine.score({ model: MODEL, pairs: docs.map((d) => ['What is the capital of France?', d]) });
    expect(scores).toHaveLength(300);
    expect(runs.length).toBeGreaterThanOrEqual(Math.ceil(300 / EMBED_BATCH.rows));
    for (const [rows, width] of runs) {
      expect(rows).toBeLessThanOrEqual(EMBED_BATCH.rows);
      if (rows! > 1) expect(rows! * width!).toBeLessThanOrEqual(EMBED_BATCH.tokens);
    }
    // Every pair ran once: the padded batches' real tokens are the request's prompt tokens.
    expect(runs.reduce((n, [rows]) => n + rows!, 0)).toBe(300);
    expect(prompt_tokens).toBeGreaterThan(300 * 10);
    for (const i of [0, 17, 123, 299]) {
      const alone = await engine.score({ model: MODEL, pairs: [['What is the capital of France?', docs[i]!]] });
      expect(Math.abs(alone.scores[0]! - scores[i]!)).toBeLessThan(1e-5);
    }
  });
});
