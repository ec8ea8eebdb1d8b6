// A rerank of 1,000 documents of a few hundred characters on a real `hearth serve`: it answers
// 200 with 1,000 results best first, and the server's resident memory (VmRSS of its process,
// where the engine's worker thread and onnxruntime live) stays within a bound over what it was
// before: at its peak, as it answers, and 10 s after.
//
// The bound, 256 MiB. The pairs run in micro-batches (src/engine/score-batches.ts: at most 32
// rows and 8,192 padded tokens a run), whose activations are a few MiB. Run as one padded
// batch, 1,000 pairs need for each layer's attention its scores and their softmax, each 1,000 ×
// 4 heads × width² × 4 bytes, width being the longest pair's tokens: at the about 140 tokens a
// pair these documents make, 2 × 295 MiB, besides the [rows, width, 128] activations. 256 MiB is
// under half of those two matrices (the test checks it, from the pairs' measured tokens). Measured
// on a 2-core machine: this server's peak was 73 MiB over before, mostly the request's and the
// reply's JSON; with the micro-batch limits lifted (one run of every pair) it was 971 MiB over,
// and back to 17 MiB over once answered (the session gives its run's memory back), so the peak
// is what tells one padded batch from micro-batches, and it is sampled every 50 ms.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CORPUS } from '../../models/tokenizer/corpus.js';
import { fixtures } from '../helpers/fixtures.js';
import { createKey, startServer, waitReady, type TestServer } from '../helpers/server.js';

const MODEL = 'svc/tiny-rerank';
const COUNT = 1000;
const MiB = 2 ** 20;
const BOUND = 256 * MiB;

let server: TestServer;
let key: string;
let fixtureDir: string;

beforeAll(async () => {
  fixtureDir = await fixtures();
  server = await startServer(['--models', MODEL, '--log-level', 'warn']);
  key = await createKey(server.dataDir, ['--rate-limit', '1000']);
  await waitReady(server.url);
}, 120_000);

afterAll(async () => {
  expect(await server?.stop()).toBe(0);
});

/** The server process's resident memory, from /proc. */
function rss(): number {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${server.proc.pid}/status`, 'utf8'));
  return Number(m![1]) * 1024;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const mib = (b: number) => (b / MiB).toFixed(1);

async function rerank(query: string, documents: string[]): Promise<Record<string, any>> {
  const res = await fetch(`${server.url}/v1/rerank`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, query, documents }),
  });
  const json = (await res.json()) as Record<string, any>;
  expect(res.status, JSON.stringify(json).slice(0, 500)).toBe(200);
  return json;
}

const WORDS = CORPUS.split(/\s+/);
/** Document `i`: 400 to 599 characters of the corpus, from a place of its own. */
const doc = (i: number) => {
  const from = (i * 37) % WORDS.length;
  return `${i}: ${[...WORDS, ...WORDS].slice(from, from + 150).join(' ')}`.slice(0, 400 + (i % 200));
};
const QUERY = 'Where did the dog run with the ball?';

describe('a rerank of 1,000 documents', () => {
  it('answers them all best first, within a bounded memory over what the server held before', async () => {
    const documents = Array.from({ length: COUNT }, (_, i) => doc(i));
    expect(Math.min(...documents.map((d) => d.length))).toBe(400);
    // Warm-up: the graph's first runs, at the widths the large request runs at, and the HTTP path.
    for (let i = 0; i < 3; i++) await rerank(QUERY, documents.slice(i * 64, (i + 1) * 64));
    await sleep(2000);
    const before = rss();

    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rss())), 50);
    const t0 = performance.now();
    const reply = await rerank(QUERY, documents).finally(() => clearInterval(sampler));
    const ms = Math.round(performance.now() - t0);
    const after = rss();
    peak = Math.max(peak, after);
    await sleep(10_000);
    const later = rss();

    const results = reply.results as { index: number; relevance_score: number; document: { text: string } }[];
    expect(results).toHaveLength(COUNT);
    expect(results.map((r) => r.index).sort((a, b) => a - b)).toEqual(documents.map((_, i) => i));
    for (let i = 1; i < COUNT; i++) expect(results[i]!.relevance_score).toBeLessThanOrEqual(results[i - 1]!.relevance_score);
    for (const r of results) expect(r.document.text).toBe(documents[r.index]);
    // Batched or not, a document's score is the one it gets alone.
    for (const i of [0, 1, 499, 999]) {
      const alone = (await rerank(QUERY, [documents[i]!])).results[0].relevance_score;
      expect(Math.abs(alone - results.find((r) => r.index === i)!.relevance_score)).toBeLessThan(1e-5);
    }

    // What one padded batch of every pair would take for the scores and softmax of one layer's attention.
    const config = JSON.parse(readFileSync(join(fixtureDir, 'tiny-rerank', 'config.json'), 'utf8')) as { num_attention_heads: number };
    const meanWidth = reply.usage.prompt_tokens / COUNT; // the batch's width is its longest pair, at least this
    const oneBatchAttention = 2 * COUNT * config.num_attention_heads * meanWidth ** 2 * 4;
    console.log(
      `rerank of ${COUNT} documents (${reply.usage.prompt_tokens} tokens, ${meanWidth.toFixed(0)} a pair): ${ms} ms; server RSS before ${mib(before)} MiB, ` +
        `peak ${mib(peak)} (+${mib(peak - before)}), after ${mib(after)} (+${mib(after - before)}), 10 s after ${mib(later)} (+${mib(later - before)}); ` +
        `bound +${mib(BOUND)} MiB; one padded batch's attention alone ${mib(oneBatchAttention)} MiB`,
    );
    expect(oneBatchAttention).toBeGreaterThan(2 * BOUND);
    expect(peak - before).toBeLessThan(BOUND);
    expect(after - before).toBeLessThan(BOUND);
    expect(later - before).toBeLessThan(BOUND);
  }, 180_000);
});
