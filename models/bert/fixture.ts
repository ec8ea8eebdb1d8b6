// Files of the tiny-embed fixture folder.
import type { FixtureFiles } from '../llama/fixture.js';
import { tokenizerConfig, tokenizerJson, type Bpe } from '../tokenizer/bpe.js';
import { buildBertGraph } from './graph.js';
import type { BertWeights } from './weights.js';

export function bertFixtureFiles(w: BertWeights, bpe: Bpe): FixtureFiles {
  const c = w.config;
  const config = {
    architectures: ['BertModel'],
    model_type: 'bert',
    vocab_size: c.vocabSize,
    hidden_size: c.hidden,
    num_hidden_layers: c.layers,
    num_attention_heads: c.heads,
    intermediate_size: c.intermediate,
    hidden_act: 'gelu',
    max_position_embeddings: c.maxPositions,
    type_vocab_size: c.typeVocab,
    layer_norm_eps: c.eps,
    embedding_dim: c.outputDim,
    pad_token_id: bpe.specialIds['<|endoftext|>'],
    torch_dtype: 'float32',
    transformers_version: '4.46.0',
  };
  return {
    'config.json': JSON.stringify(config, null, 2) + '\n',
    'tokenizer.json': JSON.stringify(tokenizerJson(bpe)) + '\n',
    'tokenizer_config.json': JSON.stringify(tokenizerConfig(bpe, { chatTemplate: false, modelMaxLength: c.maxPositions }), null, 2) + '\n',
    'special_tokens_map.json': JSON.stringify({ eos_token: '<|endoftext|>', pad_token: '<|endoftext|>' }, null, 2) + '\n',
    'onnx/model.onnx': buildBertGraph(w),
  };
}
