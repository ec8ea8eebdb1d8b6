// Cross-encoders (rerankers) as transformers.js exports them: `*ForSequenceClassification`
// with one label, the encoder of graph.ts under a classification head on the first token.
// - BERT (svc/tiny-rerank, ms-marco-MiniLM's interface): input_ids, attention_mask,
//   token_type_ids → logits [batch, 1]; the pooler (dense, tanh) on [CLS], then `classifier`.
// - XLM-RoBERTa (bge-reranker's interface): no token_type_ids; positions counted from
//   padding_idx + 1 over the tokens that are not padding; the head's dense, tanh, out_proj on <s>.
// The weights are random: each pair gets a score of its own, not a meaningful one.
import { GraphBuilder, TensorType } from '../../src/onnx/graph.js';
import type { FixtureFiles } from '../llama/fixture.js';
import { Rng } from '../rng.js';
import { UNIGRAM_SPECIAL_TOKENS_MAP, UNIGRAM_SPECIALS, unigramTokenizerConfig, unigramTokenizerJson, unigramVocab } from '../tokenizer/unigram.js';
import { WORDPIECE_SPECIAL_TOKENS_MAP, WORDPIECE_SPECIALS, wordPieceTokenizerConfig, wordPieceTokenizerJson, wordPieceVocab } from '../tokenizer/wordpiece.js';
import { bertEncoderGraph, linear } from './graph.js';
import type { BertConfig, BertEncoderWeights, BertLayer } from './weights.js';

export type CrossEncoderFamily = 'bert' | 'xlm-roberta';

export interface CrossEncoderSpec {
  family: CrossEncoderFamily;
  hidden: number;
  layers: number;
  heads: number;
  intermediate: number;
  /** The tokenizer's model_max_length: the longest pair, special tokens included. */
  maxLength: number;
  /** config.json fields beyond the architecture's (sentence-transformers' activation, say). */
  extraConfig?: Record<string, unknown>;
}

export interface CrossEncoderWeights extends BertEncoderWeights {
  /** BERT's pooler or RoBERTa's classifier.dense ([h, h]), then the projection to the labels ([h, labels]). */
  dense: Float32Array;
  denseB: Float32Array;
  out: Float32Array;
  outB: Float32Array;
}

const LABELS = 1;
/** RoBERTa's padding_idx (its <pad> id): positions start after it. */
const ROBERTA_PAD = UNIGRAM_SPECIALS['<pad>'];

/** The served default: BERT-style, small enough to load in a blink. */
export const TINY_RERANK: CrossEncoderSpec = { family: 'bert', hidden: 64, layers: 2, heads: 4, intermediate: 128, maxLength: 512 };

/** The export-faithful variants, their configs as the real checkpoints' (dimensions small). */
export const RERANK_EXPORTS: Record<string, CrossEncoderSpec> = {
  // cross-encoder/ms-marco-MiniLM-L-6-v2: sentence-transformers saved Identity, so its score is the raw logit.
  'ms-marco-export': {
    family: 'bert',
    hidden: 32,
    layers: 2,
    heads: 4,
    intermediate: 64,
    maxLength: 512,
    extraConfig: { gradient_checkpointing: false, sbert_ce_default_activation_function: 'torch.nn.modules.linear.Identity' },
  },
  // BAAI/bge-reranker-base (Xenova's export): no activation named, so sigmoid.
  'bge-reranker-export': { family: 'xlm-roberta', hidden: 32, layers: 2, heads: 4, intermediate: 64, maxLength: 512, extraConfig: { output_past: true } },
};

function bertConfig(spec: CrossEncoderSpec, vocabSize: number): BertConfig {
  const roberta = spec.family === 'xlm-roberta';
  return {
    vocabSize,
    hidden: spec.hidden,
    layers: spec.layers,
    heads: spec.heads,
    intermediate: spec.intermediate,
    // RoBERTa's table holds padding_idx + 1 rows before the first real position (514 for 512).
    maxPositions: roberta ? spec.maxLength + ROBERTA_PAD + 1 : spec.maxLength,
    typeVocab: roberta ? 1 : 2,
    outputDim: LABELS,
    eps: roberta ? 1e-5 : 1e-12,
  };
}

/**
 * Random weights large enough that attention mixes the pair's tokens into the first one
 * (small ones would leave every pair near the same score) and logits spread over a few units.
 */
export function randomCrossEncoder(config: BertConfig, rng: Rng): CrossEncoderWeights {
  const { hidden: h, intermediate: I, vocabSize: V } = config;
  const normals = (n: number, std: number) => rng.normals(n, std);
  const near = (n: number, around: number, std: number) => normals(n, std).map((x) => x + around);
  const layer = (): BertLayer => ({
    q: normals(h * h, 0.15), qb: normals(h, 0.02),
    k: normals(h * h, 0.15), kb: normals(h, 0.02),
    v: normals(h * h, 0.15), vb: normals(h, 0.02),
    o: normals(h * h, 0.15), ob: normals(h, 0.02),
    ln1w: near(h, 1, 0.05), ln1b: normals(h, 0.02),
    ff1: normals(h * I, 0.15), ff1b: normals(I, 0.02),
    ff2: normals(I * h, 0.1), ff2b: normals(h, 0.02),
    ln2w: near(h, 1, 0.05), ln2b: normals(h, 0.02),
  });
  return {
    config,
    word: normals(V * h, 1),
    position: normals(config.maxPositions * h, 0.3),
    tokenType: normals(config.typeVocab * h, 0.5),
    embLnW: near(h, 1, 0.05),
    embLnB: normals(h, 0.02),
    layers: Array.from({ length: config.layers }, layer),
    dense: normals(h * h, 1.5 / Math.sqrt(h)),
    denseB: normals(h, 0.1),
    out: normals(h * LABELS, 2.5 / Math.sqrt(h)),
    outB: normals(LABELS, 0.1),
  };
}

export function buildCrossEncoderGraph(w: CrossEncoderWeights, family: CrossEncoderFamily): Uint8Array {
  const h = w.config.hidden;
  const roberta = family === 'xlm-roberta';
  const g = new GraphBuilder(roberta ? 'xlm-roberta' : 'bert');
  const x = bertEncoderGraph(g, w, roberta ? { robertaPaddingIdx: ROBERTA_PAD, tokenTypes: false } : {});
  const first = g.node('Gather', [x, g.ints('first_index', [0], [])], { axis: 1 }, 'first_token');
  const [dense, out] = roberta ? ['classifier.dense', 'classifier.out_proj'] : ['pooler.dense', 'classifier'];
  const pooled = g.node('Tanh', [linear(g, first, w.dense, w.denseB, h, h, dense)], {}, 'pooled');
  const logits = linear(g, pooled, w.out, w.outB, h, LABELS, out);
  g.output('logits', logits, TensorType.FLOAT, ['batch_size', LABELS]);
  return g.toBytes();
}

/** The weights of a spec's fixture: its vocabulary decides the embedding's rows. */
export function crossEncoderWeights(spec: CrossEncoderSpec, seed: number): CrossEncoderWeights {
  const vocabSize = spec.family === 'bert' ? wordPieceVocab().length : unigramVocab().length;
  return randomCrossEncoder(bertConfig(spec, vocabSize), new Rng(seed));
}

/** config.json, tokenizer files and onnx/model.onnx, as a transformers.js export of the family lays them out. */
export function crossEncoderFixtureFiles(spec: CrossEncoderSpec, seed: number): FixtureFiles {
  const w = crossEncoderWeights(spec, seed);
  const c = w.config;
  const roberta = spec.family === 'xlm-roberta';
  const config = {
    architectures: [roberta ? 'XLMRobertaForSequenceClassification' : 'BertForSequenceClassification'],
    attention_probs_dropout_prob: 0.1,
    ...(roberta ? { bos_token_id: UNIGRAM_SPECIALS['<s>'], eos_token_id: UNIGRAM_SPECIALS['</s>'] } : {}),
    classifier_dropout: null,
    hidden_act: 'gelu',
    hidden_dropout_prob: 0.1,
    hidden_size: c.hidden,
    id2label: { '0': 'LABEL_0' },
    initializer_range: 0.02,
    intermediate_size: c.intermediate,
    label2id: { LABEL_0: 0 },
    layer_norm_eps: c.eps,
    max_position_embeddings: c.maxPositions,
    model_type: spec.family,
    num_attention_heads: c.heads,
    num_hidden_layers: c.layers,
    pad_token_id: roberta ? ROBERTA_PAD : WORDPIECE_SPECIALS['[PAD]'],
    position_embedding_type: 'absolute',
    torch_dtype: 'float32',
    transformers_version: '4.36.2',
    type_vocab_size: c.typeVocab,
    use_cache: true,
    vocab_size: c.vocabSize,
    ...spec.extraConfig,
  };
  const tokenizer = roberta
    ? { json: unigramTokenizerJson(unigramVocab()), config: unigramTokenizerConfig(spec.maxLength), map: UNIGRAM_SPECIAL_TOKENS_MAP }
    : { json: wordPieceTokenizerJson(wordPieceVocab()), config: wordPieceTokenizerConfig(spec.maxLength), map: WORDPIECE_SPECIAL_TOKENS_MAP };
  return {
    'config.json': JSON.stringify(Object.fromEntries(Object.entries(config).sort(([a], [b]) => (a < b ? -1 : 1))), null, 2) + '\n',
    'tokenizer.json': JSON.stringify(tokenizer.json) + '\n',
    'tokenizer_config.json': JSON.stringify(tokenizer.config, null, 2) + '\n',
    'special_tokens_map.json': JSON.stringify(tokenizer.map, null, 2) + '\n',
    'onnx/model.onnx': buildCrossEncoderGraph(w, spec.family),
  };
}
