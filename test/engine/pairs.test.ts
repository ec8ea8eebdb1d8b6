// A cross-encoder's pairs (src/engine/text/pairs.ts): the fast tokenizer's longest-first cut,
// and pairs within the context encoded exactly as transformers.js's tokenizer encodes them.
import { AutoTokenizer, env } from '@huggingface/transformers';
import { beforeAll, describe, expect, it } from 'vitest';
import { PairEncoder, truncateLongestFirst } from '../../src/engine/text/pairs.js';
import { exportFixtures } from '../helpers/exports.js';

const seq = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag}${i}`);
const lengths = (a: number, b: number, room: number) => truncateLongestFirst(seq(a, 'a'), seq(b, 'b'), room).map((s) => s.length);

describe('truncateLongestFirst', () => {
  it('leaves pairs that fit alone', () => {
    expect(lengths(3, 4, 7)).toEqual([3, 4]);
  });

  it('cuts only the longer while the shorter leaves it room, from the end', () => {
    expect(lengths(10, 600, 509)).toEqual([10, 499]);
    expect(lengths(600, 10, 509)).toEqual([499, 10]);
    expect(truncateLongestFirst(seq(2, 'a'), seq(5, 'b'), 5)).toEqual([['a0', 'a1'], ['b0', 'b1', 'b2']]);
  });

  it('halves the room when both are long, the one that was longer keeping the odd token (the second when equal)', () => {
    expect(lengths(301, 300, 509)).toEqual([255, 254]);
    expect(lengths(300, 301, 509)).toEqual([254, 255]);
    expect(lengths(300, 300, 509)).toEqual([254, 255]);
    expect(lengths(300, 300, 508)).toEqual([254, 254]);
    // A shorter text longer than the room itself.
    expect(lengths(700, 600, 509)).toEqual([255, 254]);
  });
});

describe.each(['tiny-rerank', 'bge-reranker-export'])('PairEncoder on %s', (name) => {
  let encoder: PairEncoder;
  let tok: Awaited<ReturnType<typeof AutoTokenizer.from_pretrained>>;
  beforeAll(async () => {
    const dir = await exportFixtures();
    env.localModelPath = `${dir}/`;
    env.allowRemoteModels = false;
    tok = await AutoTokenizer.from_pretrained(name);
    encoder = new PairEncoder(tok, 512);
  }, 120_000);

  it("encodes pairs within the context as transformers.js's tokenizer does, ids and token types", () => {
    for (const [a, b] of [
      ['What is the capital of France?', 'The capital of France is Paris.'],
      ['', 'only a document'],
      ['Café au lait 😀', 'and a second text'],
    ]) {
      const ref = tok(a!, { text_pair: b!, return_tensor: false }) as unknown as { input_ids: number[]; token_type_ids?: number[] };
      const got = encoder.encode(a!, b!);
      expect(got.ids).toEqual(ref.input_ids);
      expect(got.types).toEqual(ref.token_type_ids ?? got.ids.map(() => 0));
    }
  });

  it('keeps an empty second text a pair, closing separator and all, as the fast tokenizer does (transformers.js drops it)', () => {
    const alone = tok('a query', { return_tensor: false }) as unknown as { input_ids: number[] };
    const sep = alone.input_ids.at(-1)!;
    const got = encoder.encode('a query', '');
    expect(got.ids).toEqual([...alone.input_ids, ...(name === 'tiny-rerank' ? [sep] : [sep, sep])]);
  });

  it('keeps a pair longer than the context to the context, its special tokens included', () => {
    const long = 'the cat sat on the mat and looked at the dog '.repeat(80);
    const got = encoder.encode(long, long);
    expect(got.ids).toHaveLength(512);
    expect(got.ids.at(-1)).toBe(tok.convert_tokens_to_ids(name === 'tiny-rerank' ? '[SEP]' : '</s>'));
  });
});
