// Builds each fixture's files in memory and writes them atomically (temp folder, rename).
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { crossEncoderFixtureFiles, RERANK_EXPORTS, TINY_RERANK } from './bert/cross-encoder.js';
import { bertFixtureFiles } from './bert/fixture.js';
import { EXPORT_FIXTURES, exportFixtureFiles } from './exports/fixtures.js';
import { fusedLlamaGraph, genaiConfig } from './exports/fused-graph.js';
import { qwen2vlFixtureFiles } from './exports/qwen2vl.js';
import { qwen25vlFixtureFiles } from './exports/qwen25vl.js';
import { smolvlmFixtureFiles } from './exports/smolvlm.js';
import { whisperFixtureFiles } from './exports/whisper.js';
import { designTinyEmbed } from './bert/tiny-embed.js';
import { llamaFixtureFiles, type FixtureFiles } from './llama/fixture.js';
import { buildLlamaGraph } from './llama/graph.js';
import type { Q4Options } from './llama/quantize.js';
import { designTinyChat } from './llama/tiny-chat.js';
import { randomLlama, type LlamaConfig } from './llama/weights.js';
import { Rng } from './rng.js';
import { trainBpe, type Bpe } from './tokenizer/bpe.js';

export const SEED = 20241107;

export const BENCH_CONFIG: LlamaConfig = {
  vocabSize: 512,
  hidden: 512,
  layers: 10,
  heads: 8,
  kvHeads: 2,
  headDim: 64,
  intermediate: 2048,
  ropeTheta: 10000,
  rmsEps: 1e-6,
  maxPositions: 4096,
};

let cachedBpe: Bpe | undefined;
export function fixtureTokenizer(): Bpe {
  return (cachedBpe ??= trainBpe());
}

export function tinyChat() {
  return designTinyChat(fixtureTokenizer(), SEED);
}

export function benchChat() {
  const bpe = fixtureTokenizer();
  const w = randomLlama({ ...BENCH_CONFIG, vocabSize: bpe.vocab.length }, new Rng(SEED + 2));
  // EOS can never win: its lm_head columns are zero (logit exactly 0), while some of the
  // other ~500 random logits always exceed 0.
  const V = w.config.vocabSize;
  for (const id of [bpe.specialIds['<|im_end|>'], bpe.specialIds['<|endoftext|>']]) {
    for (let r = 0; r < w.config.hidden; r++) w.lmHead[r * V + id] = 0;
  }
  return w;
}

/** The export-faithful cross-encoders (the exports preset). */
export const RERANK_FIXTURES = Object.keys(RERANK_EXPORTS);

export function tinyEmbed() {
  return designTinyEmbed(fixtureTokenizer(), SEED + 1);
}

export const FIXTURE_BUILDERS: Record<string, () => FixtureFiles> = {
  'tiny-chat': () => llamaFixtureFiles(tinyChat().weights, fixtureTokenizer()),
  'tiny-embed': () => bertFixtureFiles(tinyEmbed(), fixtureTokenizer()),
  'tiny-rerank': () => crossEncoderFixtureFiles(TINY_RERANK, SEED + 3),
  'bench-chat': () => {
    const w = benchChat();
    // The same weights as a q4 (MatMulNBits) and an fp16 export (fp16 KV and logits), for npm run bench.
    return {
      ...llamaFixtureFiles(w, fixtureTokenizer()),
      'onnx/model_q4.onnx': buildLlamaGraph(w, { weights: 'q4' }),
      'onnx/model_fp16.onnx': buildLlamaGraph(w, { weights: 'fp16', io: 'float16' }),
    };
  },
  // The steps from the bench's q4 (block 16, float compute) to the builder's, one change at a time.
  'bench-chat-q4-b32': () => benchQ4Only({ block: 32 }),
  'bench-chat-q4-b32-acc4': () => {
    const q4 = { block: 32, accuracyLevel: 4 };
    // q4f16 as transformers.js's exports have it: the same int4 weights, float16 scales, activations and KV.
    return { ...benchQ4Only(q4), 'onnx/model_q4f16.onnx': buildLlamaGraph(benchChat(), { weights: 'q4f16', io: 'float16', q4 }) };
  },
  'bench-chat-genai': () => {
    const w = benchChat();
    const bpe = fixtureTokenizer();
    // The same weights as onnxruntime-genai's model builder writes them (fused-graph.ts): fp32,
    // and int4 as it writes it for the CPU (MatMulNBits, block 32, accuracy_level 4).
    const eos = [bpe.specialIds['<|im_end|>'], bpe.specialIds['<|endoftext|>']];
    const genai = genaiConfig(w, { bos: bpe.specialIds['<|endoftext|>'], eos, filename: 'onnx/model.onnx', type: 'llama' });
    return {
      ...llamaFixtureFiles(w, bpe),
      'onnx/model.onnx': fusedLlamaGraph(w, { tiedEmbeddings: false }).toBytes(),
      'onnx/model_q4.onnx': fusedLlamaGraph(w, { weights: 'q4', tiedEmbeddings: false }).toBytes(),
      'genai_config.json': JSON.stringify(genai, null, 4) + '\n',
    };
  },
  ...Object.fromEntries(EXPORT_FIXTURES.map((name) => [name, () => exportFixtureFiles(name, exportSeed(name))])),
  // Cross-encoders with the interfaces of ms-marco-MiniLM and bge-reranker (bert/cross-encoder.ts).
  ...Object.fromEntries(RERANK_FIXTURES.map((name, i) => [name, () => crossEncoderFixtureFiles(RERANK_EXPORTS[name]!, SEED + 100 + i)])),
  // A vision-language model as onnx-community's SmolVLM exports (exports/smolvlm.ts).
  'smolvlm-export': () => smolvlmFixtureFiles(SEED + 200),
  // Qwen2-VL as onnx-community's export: dynamic resolution, M-RoPE (exports/qwen2vl.ts).
  'qwen2vl-export': () => qwen2vlFixtureFiles(QWEN2VL_SEED),
  // Its Qwen2.5-VL twin: image_grid_thw, the text model in text_config, RMSNorm / SwiGLU vision blocks (exports/qwen25vl.ts).
  'qwen25vl-export': () => qwen25vlFixtureFiles(QWEN25VL_SEED),
  // Speech to text: Whisper as onnx-community's exports with cross-attention outputs (exports/whisper.ts).
  'tiny-whisper': () => whisperFixtureFiles(fixtureTokenizer(), TINY_WHISPER_SEED),
};

/** The tiny-whisper fixture's seed. */
export const TINY_WHISPER_SEED = SEED + 300;

/** The Qwen2-VL fixture's seed (its text weights: qwen2vlTextWeights(QWEN2VL_SEED); its vision tower's: the next). */
export const QWEN2VL_SEED = SEED + 210;

/** The Qwen2.5-VL fixture's seed (its text weights: qwen25vlTextWeights(QWEN25VL_SEED); its vision tower's: the next). */
export const QWEN25VL_SEED = SEED + 220;

/** The bench model's configuration and tokenizer with only a q4 file, quantized as `q4` says. */
function benchQ4Only(q4: Q4Options): FixtureFiles {
  const w = benchChat();
  const { 'onnx/model.onnx': _fp32, ...rest } = llamaFixtureFiles(w, fixtureTokenizer(), {}, false);
  return { ...rest, 'onnx/model_q4.onnx': buildLlamaGraph(w, { weights: 'q4', q4 }) };
}

/** An export fixture's seed: its place in EXPORT_SPECS (new ones go last, so the others keep theirs). */
export function exportSeed(name: string): number {
  return SEED + 10 + EXPORT_FIXTURES.indexOf(name);
}

/** Writes one fixture folder atomically: a half-written fixture never looks complete. */
export function writeFixtureFolder(outDir: string, name: string, files: FixtureFiles, replace = true): void {
  mkdirSync(outDir, { recursive: true });
  const final = join(outDir, name);
  const tmp = join(outDir, `.${name}.tmp-${process.pid}-${Date.now()}`);
  rmSync(tmp, { recursive: true, force: true });
  for (const [rel, data] of Object.entries(files)) {
    const p = join(tmp, rel);
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, data);
  }
  if (!replace) {
    // Another writer may have finished first: keep theirs.
    try {
      renameSync(tmp, final);
    } catch {
      rmSync(tmp, { recursive: true, force: true });
    }
    return;
  }
  const old = `${final}.old-${process.pid}-${Date.now()}`;
  if (existsSync(final)) renameSync(final, old);
  renameSync(tmp, final);
  rmSync(old, { recursive: true, force: true });
}
