// Files of a Llama fixture folder: config.json, generation_config.json, tokenizer files
// and onnx/model.onnx.
import type { Bpe } from '../tokenizer/bpe.js';
import { tokenizerConfig, tokenizerJson } from '../tokenizer/bpe.js';
import { buildLlamaGraph } from './graph.js';
import type { LlamaConfig, LlamaWeights } from './weights.js';

export type FixtureFiles = Record<string, Uint8Array | string>;

/** config.json's dimension fields, as Hugging Face names them. */
export function configDims(c: LlamaConfig) {
  return {
    hidden_size: c.hidden,
    intermediate_size: c.intermediate,
    num_hidden_layers: c.layers,
    num_attention_heads: c.heads,
    num_key_value_heads: c.kvHeads,
    head_dim: c.headDim,
    hidden_act: 'silu',
    vocab_size: c.vocabSize,
    max_position_embeddings: c.maxPositions,
    rope_theta: c.ropeTheta,
    rope_scaling: null,
    rms_norm_eps: c.rmsEps,
  };
}

/** `withGraph` false leaves out onnx/model.onnx (building it is most of the time), for folders that hold other dtypes only. */
export function llamaFixtureFiles(w: LlamaWeights, bpe: Bpe, extra: Record<string, unknown> = {}, withGraph = true): FixtureFiles {
  const c = w.config;
  const eos = bpe.specialIds['<|im_end|>'];
  const endoftext = bpe.specialIds['<|endoftext|>'];
  const config = {
    architectures: ['LlamaForCausalLM'],
    model_type: 'llama',
    ...configDims(c),
    attention_bias: false,
    mlp_bias: false,
    tie_word_embeddings: false,
    bos_token_id: endoftext,
    eos_token_id: eos,
    pad_token_id: endoftext,
    torch_dtype: 'float32',
    use_cache: true,
    transformers_version: '4.46.0',
    ...extra,
  };
  const generation = { bos_token_id: endoftext, eos_token_id: [eos, endoftext], pad_token_id: endoftext, transformers_version: '4.46.0' };
  return {
    'config.json': JSON.stringify(config, null, 2) + '\n',
    'generation_config.json': JSON.stringify(generation, null, 2) + '\n',
    'tokenizer.json': JSON.stringify(tokenizerJson(bpe)) + '\n',
    'tokenizer_config.json': JSON.stringify(tokenizerConfig(bpe, { chatTemplate: true, modelMaxLength: c.maxPositions }), null, 2) + '\n',
    'special_tokens_map.json': JSON.stringify({ eos_token: '<|im_end|>', pad_token: '<|endoftext|>', additional_special_tokens: ['<|im_start|>', '<|im_end|>'] }, null, 2) + '\n',
    ...(withGraph ? { 'onnx/model.onnx': buildLlamaGraph(w) } : {}),
  };
}
