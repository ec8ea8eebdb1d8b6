// The cross-encoder fixtures have the interfaces of the exports they stand for: svc/tiny-rerank
// and ms-marco-MiniLM's (BertForSequenceClassification: input_ids, attention_mask,
// token_type_ids → logits [batch, 1], a WordPiece tokenizer pairing [CLS] a [SEP] b [SEP] with
// types 0 then 1), and bge-reranker's (XLMRobertaForSequenceClassification: no token_type_ids,
// a Unigram tokenizer pairing <s> a </s></s> b </s>, positions after padding_idx); tiny-rerank is
// a default fixture, served by the default catalog.
import * as ort from 'onnxruntime-node';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AutoTokenizer, env } from '@huggingface/transformers';
import { beforeAll, describe, expect, it } from 'vitest';
import { PRESET_FIXTURES } from '../../models/index.js';
import { parseCatalog } from '../../src/engine/catalog.js';
import { validateCheckpoint } from '../../src/engine/models/files.js';
import { nodeFiles } from '../../src/ops/checkpoints.js';
import { defaultCatalogFile } from '../../src/paths.js';
import { exportFixtures } from '../helpers/exports.js';

let dir: string;
const config = (name: string) => JSON.parse(readFileSync(join(dir, name, 'config.json'), 'utf8'));
const session = (name: string) => ort.InferenceSession.create(join(dir, name, 'onnx', 'model.onnx'));
const tokens = async (name: string, a: string, b: string) => {
  const tok = await AutoTokenizer.from_pretrained(name);
  const { token_type_ids } = tok(a, { text_pair: b, return_tensor: false }) as unknown as { token_type_ids?: number[] };
  return { pieces: tok.tokenize(a, { pair: b, add_special_tokens: true }), types: token_type_ids };
};
const ids = (n: number[]) => new ort.Tensor('int64', BigInt64Array.from(n.map(BigInt)), [1, n.length]);

beforeAll(async () => {
  dir = await exportFixtures();
  env.localModelPath = `${dir}/`;
  env.allowRemoteModels = false;
}, 120_000);

describe.each(['tiny-rerank', 'ms-marco-export'])('the BERT cross-encoder %s', (name) => {
  it('is a one-label BertForSequenceClassification taking token_type_ids and giving logits [batch, 1]', async () => {
    expect(config(name)).toMatchObject({ architectures: ['BertForSequenceClassification'], model_type: 'bert', id2label: { '0': 'LABEL_0' }, type_vocab_size: 2 });
    const s = await session(name);
    expect(s.inputNames).toEqual(['input_ids', 'attention_mask', 'token_type_ids']);
    expect(s.outputNames).toEqual(['logits']);
    const out = await s.run({ input_ids: ids([101, 200, 102, 201, 102]), attention_mask: ids([1, 1, 1, 1, 1]), token_type_ids: ids([0, 0, 0, 1, 1]) });
    expect(out.logits!.dims).toEqual([1, 1]);
  });

  it('pairs texts as [CLS] a [SEP] b [SEP], lowercased WordPiece, types 0 then 1', async () => {
    const { pieces, types } = await tokens(name, 'What is the capital of France?', 'Paris, cafés');
    expect(pieces).toEqual(['[CLS]', 'what', 'is', 'the', 'capital', 'of', 'france', '?', '[SEP]', 'paris', ',', 'c', '##a', '##f', '##es', '[SEP]']);
    expect(types).toEqual([...Array(9).fill(0), ...Array(7).fill(1)]);
  });
});

describe('the export-faithful configs', () => {
  it("ms-marco-MiniLM's names the Identity activation, so its score is the raw logit", () => {
    expect(config('ms-marco-export').sbert_ce_default_activation_function).toBe('torch.nn.modules.linear.Identity');
    expect(config('tiny-rerank').sbert_ce_default_activation_function).toBeUndefined();
  });

  it("bge-reranker's is a one-label XLM-RoBERTa: no token_type_ids, 514 positions for 512 tokens, pad id 1", async () => {
    expect(config('bge-reranker-export')).toMatchObject({
      architectures: ['XLMRobertaForSequenceClassification'],
      model_type: 'xlm-roberta',
      id2label: { '0': 'LABEL_0' },
      max_position_embeddings: 514,
      pad_token_id: 1,
      type_vocab_size: 1,
    });
    const s = await session('bge-reranker-export');
    expect(s.inputNames).toEqual(['input_ids', 'attention_mask']);
    expect(s.outputNames).toEqual(['logits']);
    const tok = JSON.parse(readFileSync(join(dir, 'bge-reranker-export', 'tokenizer.json'), 'utf8'));
    expect(tok.model.type).toBe('Unigram');
    expect(tok.pre_tokenizer.type).toBe('Metaspace');
  });

  it("bge-reranker's pairs texts as <s> a </s></s> b </s> in SentencePiece pieces", async () => {
    const { pieces, types } = await tokens('bge-reranker-export', 'What is the capital of France?', 'Paris');
    expect(pieces).toEqual(['<s>', '▁What', '▁is', '▁the', '▁capital', '▁of', '▁France', '?', '</s>', '</s>', '▁Paris', '</s>']);
    expect(types).toBeUndefined();
  });

  it("bge-reranker's positions start after padding_idx and skip padding: a row's logit is the same alone and padded", async () => {
    const s = await session('bge-reranker-export');
    const row = [0, 120, 121, 2, 2, 130, 2];
    const alone = (await s.run({ input_ids: ids(row), attention_mask: ids(row.map(() => 1)) })).logits!.data[0] as number;
    const padded = [...row, 1, 1, 1];
    const mask = [...row.map(() => 1), 0, 0, 0];
    const both = await s.run({ input_ids: ids(padded), attention_mask: ids(mask) });
    expect(Math.abs((both.logits!.data[0] as number) - alone)).toBeLessThan(1e-5);
  });
});

describe('svc/tiny-rerank by default', () => {
  it('is a default fixture, in the catalog as task rerank, and recognised as rerank from its folder alone', async () => {
    expect(PRESET_FIXTURES.default).toContain('tiny-rerank');
    const file = defaultCatalogFile();
    const entry = parseCatalog(readFileSync(file, 'utf8'), (s) => join(file, '..', s)).find((e) => e.id === 'svc/tiny-rerank');
    expect(entry).toMatchObject({ task: 'rerank', context_length: 512 });
    for (const name of ['tiny-rerank', 'ms-marco-export', 'bge-reranker-export']) {
      expect(await validateCheckpoint(nodeFiles, join(dir, name)), name).toMatchObject({ task: 'rerank', context_length: 512 });
    }
  });
});
