// The Qwen-shaped model (models/exports/qwen-shaped.ts) as a GGUF file, for llama.cpp beside
// Hearth on the same weights, shapes and 151,936-token vocabulary. Its ONNX file is the
// builder's q4f16: MatMulNBits blocks of 32, symmetric 4-bit codes around 8 with one float16
// scale a block, the 4-bit embedding shared with lm_head. Q4_0 is ggml's same layout (blocks
// of 32, codes around 8, a float16 scale), and the file has no output.weight, so llama.cpp too
// runs lm_head on the 4-bit embedding; F16 is there for scale.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { qwenShapedSpec, qwenShapedWeights, type QwenShapedSize } from '../exports/qwen-shaped.js';
import { hfVocab } from './hf-vocab.js';
import { writeLlamaGguf, type LlamaGgufOptions, type LlamaGgufType } from './llama.js';

const require = createRequire(import.meta.url);

/** Writes the Qwen-shaped model of `size` as a GGUF file of `type` at `path`. */
export function writeQwenShapedGguf(path: string, size: QwenShapedSize, type: LlamaGgufType, options: LlamaGgufOptions = {}): void {
  const spec = qwenShapedSpec(size);
  const json = readFileSync(require.resolve(`${spec.tokenizer}/models/tokenizer.json`), 'utf8');
  const vocab = hfVocab(json, { vocabSize: spec.vocabSize!, bos: '<|endoftext|>', eos: '<|im_end|>', pad: '<|endoftext|>' });
  writeLlamaGguf(path, qwenShapedWeights(size), vocab, type, { name: `qwen2_5-shaped-${size}`, ...options });
}
