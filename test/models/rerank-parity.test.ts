// The cross-encoder fixtures, each the interface of a reranker people download: svc/tiny-rerank
// (BERT, WordPiece, no activation named: sigmoid), ms-marco-MiniLM's (Bert, Identity: the raw
// logit) and bge-reranker's (XLM-RoBERTa, Unigram, no token_type_ids: sigmoid). Hearth's scores
// through the engine equal the CrossEncoder activation of transformers.js's
// AutoModelForSequenceClassification logits on the same files, within 1e-4: for a padded
// batch of pairs of different lengths, and for pairs longer than the context, cut longest
// first (transformers.js's tokenizer only cuts the tail of the whole pair, so the reference
// is built from each text's tokens, cut as the fast tokenizer cuts them, in the template).
import { join } from 'node:path';
import { AutoModelForSequenceClassification, AutoTokenizer, Tensor, env, type PreTrainedModel, type PreTrainedTokenizer } from '@huggingface/transformers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeBackend } from '../../src/backends/node.js';
import { createEngine } from '../../src/engine/engine.js';
import type { EngineApi } from '../../src/engine/protocol.js';
import { exportFixtures, referenceScores } from '../helpers/exports.js';
import { CORPUS } from '../../models/tokenizer/corpus.js';

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));
const identity = (x: number) => x;
const CONTEXT = 512;

interface Variant {
  name: string;
  activation: (x: number) => number;
  /** The pair template of the family's real tokenizer, as ids: [CLS] a [SEP] b [SEP] (types 0, 1), or <s> a </s></s> b </s>. */
  template: (tok: PreTrainedTokenizer, a: number[], b: number[]) => { ids: number[]; types?: number[] };
}

const id = (tok: PreTrainedTokenizer, t: string) => tok.convert_tokens_to_ids(t) as number;
const bert = (tok: PreTrainedTokenizer, a: number[], b: number[]) => ({
  ids: [id(tok, '[CLS]'), ...a, id(tok, '[SEP]'), ...b, id(tok, '[SEP]')],
  types: [...a.map(() => 0), 0, 0, ...b.map(() => 1), 1],
});
const roberta = (tok: PreTrainedTokenizer, a: number[], b: number[]) => ({ ids: [id(tok, '<s>'), ...a, id(tok, '</s>'), id(tok, '</s>'), ...b, id(tok, '</s>')] });

const VARIANTS: Variant[] = [
  { name: 'tiny-rerank', activation: sigmoid, template: bert },
  { name: 'ms-marco-export', activation: identity, template: bert },
  { name: 'bge-reranker-export', activation: sigmoid, template: roberta },
];

const QUERY = 'What is the capital of France?';
const DOCS = ['The capital of France is Paris.', 'A small bird sang in the tree near the house.', 'Paris', 'Café au lait, s’il vous plaît 😀 and a much longer second text about rivers, stones and the weather this week.'];
/** Corpus text of about `words` words. */
const long = (words: number, from = 0) => CORPUS.split(/\s+/).slice(from, from + words).join(' ');

/**
 * The fast tokenizer's longest-first cut of two sequences to `room` tokens (tokenizers'
 * TruncationStrategy::LongestFirst): the longer is cut to the shorter's length or to what the
 * shorter leaves; if that is not enough, each gets half, the one that was longer the odd token.
 */
function longestFirst(a: number[], b: number[], room: number): [number[], number[]] {
  if (a.length + b.length <= room) return [a, b];
  const longer = a.length > b.length ? 'a' : 'b';
  const [short, tall] = longer === 'a' ? [b.length, a.length] : [a.length, b.length];
  let keepShort = short;
  let keepTall = Math.min(tall, Math.max(short, room - short));
  if (keepShort + keepTall > room) [keepShort, keepTall] = [Math.floor(room / 2), Math.ceil(room / 2)];
  return longer === 'a' ? [a.slice(0, keepTall), b.slice(0, keepShort)] : [a.slice(0, keepShort), b.slice(0, keepTall)];
}

let dir: string;
let engine: EngineApi;

beforeAll(async () => {
  dir = await exportFixtures();
  env.localModelPath = `${dir}/`;
  env.allowRemoteModels = false;
  engine = createEngine(nodeBackend('cpu'));
  const price = { input_per_1m: 0, output_per_1m: 0 };
  await engine.load(VARIANTS.map((v) => ({ id: `svc/${v.name}`, task: 'rerank' as const, class: 't', context_length: CONTEXT, source: join(dir, v.name), price })));
  for (let i = 0; i < 400 && (await engine.models()).some((m) => m.status === 'starting'); i++) await new Promise((r) => setTimeout(r, 50));
  expect((await engine.models()).map((m) => [m.id, m.status])).toEqual(VARIANTS.map((v) => [`svc/${v.name}`, 'ready']));
}, 120_000);
afterAll(() => engine?.dispose());

/** transformers.js's logits for a batch of already-encoded pairs, right-padded as its tokenizer pads. */
async function referenceLogits(model: PreTrainedModel, tok: PreTrainedTokenizer, rows: { ids: number[]; types?: number[] }[]): Promise<number[]> {
  const width = Math.max(...rows.map((r) => r.ids.length));
  const flat = (f: (r: (typeof rows)[number], i: number) => number) => BigInt64Array.from(rows.flatMap((r) => Array.from({ length: width }, (_, i) => BigInt(f(r, i)))));
  const dims = [rows.length, width];
  const inputs: Record<string, Tensor> = {
    input_ids: new Tensor('int64', flat((r, i) => r.ids[i] ?? tok.pad_token_id!), dims),
    attention_mask: new Tensor('int64', flat((r, i) => (i < r.ids.length ? 1 : 0)), dims),
  };
  if (rows[0]!.types) inputs.token_type_ids = new Tensor('int64', flat((r, i) => r.types![i] ?? 0), dims);
  const { logits } = await model(inputs);
  return Array.from(logits.data as Float32Array);
}

describe.each(VARIANTS)('$name', ({ name, activation, template }) => {
  let tok: PreTrainedTokenizer;
  let model: PreTrainedModel;
  beforeAll(async () => {
    tok = await AutoTokenizer.from_pretrained(name);
    model = await AutoModelForSequenceClassification.from_pretrained(name, { dtype: 'fp32', device: 'cpu', local_files_only: true });
  }, 60_000);
  afterAll(() => model?.dispose());

  it("scores a padded batch of pairs of different lengths as the activation of transformers.js's logits", async () => {
    const pairs = DOCS.map((d): [string, string] => [QUERY, d]);
    const ref = await referenceScores(name, pairs, activation);
    const got = await engine.score({ model: `svc/${name}`, pairs });
    expect(got.scores).toHaveLength(DOCS.length);
    got.scores.forEach((s, i) => expect(Math.abs(s - ref.scores[i]!)).toBeLessThan(1e-4));
    // Every token of every pair, special tokens included, as the tokenizer's attention mask counts them.
    expect(got.prompt_tokens).toBe(ref.tokens.reduce((a, b) => a + b, 0));
    // Random weights, yet each pair its own score.
    expect(new Set(got.scores.map((s) => s.toFixed(4))).size).toBe(DOCS.length);
  });

  it('cuts pairs longer than the context longest first, as the fast tokenizer does, and scores them alike', async () => {
    // A short query and a long document (only the document is cut); two long texts (each keeps half).
    const pairs: [string, string][] = [
      [QUERY, long(900)],
      [long(500, 3), long(600, 40)],
      [long(300, 7), 'Paris'],
    ];
    const encode = (t: string) => tok.encode(t, { add_special_tokens: false });
    const specials = template(tok, [], []).ids.length;
    const rows = pairs.map(([a, b]) => template(tok, ...longestFirst(encode(a), encode(b), CONTEXT - specials)));
    expect(rows.map((r) => r.ids.length)).toEqual([CONTEXT, CONTEXT, rows[2]!.ids.length]);
    expect(rows[2]!.ids.length).toBeLessThan(CONTEXT);
    const ref = (await referenceLogits(model, tok, rows)).map(activation);
    const got = await engine.score({ model: `svc/${name}`, pairs });
    got.scores.forEach((s, i) => expect(Math.abs(s - ref[i]!)).toBeLessThan(1e-4));
    expect(got.prompt_tokens).toBe(rows.reduce((n, r) => n + r.ids.length, 0));
  });
});
