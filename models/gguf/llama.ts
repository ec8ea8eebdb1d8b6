// A Hearth Llama (models/llama/weights.ts) as the GGUF file llama.cpp loads as architecture
// `llama`, with the fixture's byte-level BPE as a `gpt2` tokenizer: the same weights as the
// ONNX fixture, for running the same model in llama.cpp (the bench's peer, the parity test).
//
// Conventions bridged:
//  - Hearth keeps a matrix as row-major [in, out] (y = x · W); ggml keeps [out, in] rows with
//    ne = [in, out], as convert_hf_to_gguf.py writes a Hugging Face nn.Linear weight.
//  - Hearth's rotary embedding is the rotate-half kind (dimension i pairs with i + D/2), llama.cpp's
//    `llama` the interleaved kind (2i with 2i+1): q and k rows are permuted within each head as
//    convert_hf_to_gguf.py's LlamaModel.permute does, which makes the two compute the same scores.
//  - Norm weights stay F32 in every file type; every 2-D weight takes the file's type (as
//    `llama-quantize --pure` writes it), so Q4_0 means Q4_0 throughout, lm_head and embeddings too.
//  - Tied embeddings (a Llama whose lmHead is empty, as the Qwen-shaped export's): no output.weight,
//    so llama.cpp computes lm_head with token_embd, as the GGUFs of Qwen2.5-0.5B have it.
//  - The tokenizer: the fixture's BPE (fixtureVocab), or a Hugging Face tokenizer.json (hf-vocab.ts).
import type { LlamaWeights } from '../llama/weights.js';
import { SPECIAL_TOKENS, type Bpe } from '../tokenizer/bpe.js';
import { gguf, GgufType, writeGguf, type GgmlTypeName, type GgufFile, type GgufTensor, type GgufValue } from './writer.js';

export const GGUF_TYPES = ['F32', 'F16', 'Q8_0', 'Q4_0'] as const satisfies readonly GgmlTypeName[];
export type LlamaGgufType = (typeof GGUF_TYPES)[number];

/** general.file_type (llama_ftype) of each. */
const FILE_TYPE: Record<LlamaGgufType, number> = { F32: 0, F16: 1, Q4_0: 2, Q8_0: 7 };

/** llama_token_type: a normal token, a control token (parsed from text only when asked), one added by the user, an unused (padding) id. */
export const TOKEN_NORMAL = 1;
export const TOKEN_CONTROL = 3;
export const TOKEN_USER_DEFINED = 4;
export const TOKEN_UNUSED = 5;

/** A tokenizer as GGUF metadata (a `gpt2`-model BPE): tokens by id, their llama_token_type, merges, the pre-tokenizer's name, special ids. */
export interface GgufVocab {
  tokens: string[];
  types: number[];
  merges: string[];
  /** tokenizer.ggml.pre: llama.cpp's name of the pre-tokenizer's regex ('gpt-2', 'qwen2', …). */
  pre: string;
  bos: number;
  eos: number;
  pad: number;
}

/** The fixture's byte-level BPE, whose pre-tokenizer is GPT-2's (models/tokenizer/bpe.ts). */
export function fixtureVocab(bpe: Bpe): GgufVocab {
  const specials = new Set<string>(SPECIAL_TOKENS);
  return {
    tokens: bpe.vocab,
    types: bpe.vocab.map((t) => (specials.has(t) ? TOKEN_CONTROL : TOKEN_NORMAL)),
    merges: bpe.merges.map(([a, b]) => `${a} ${b}`),
    pre: 'gpt-2',
    bos: bpe.specialIds['<|endoftext|>'],
    eos: bpe.specialIds['<|im_end|>'],
    pad: bpe.specialIds['<|endoftext|>'],
  };
}

/** W [K, N] row-major (y = x · W) → [N, K] row-major: ggml's [out, in] rows. */
export function transpose(w: Float32Array, K: number, N: number): Float32Array {
  const out = new Float32Array(K * N);
  for (let k = 0; k < K; k++) {
    const row = k * N;
    for (let n = 0; n < N; n++) out[n * K + k] = w[row + n]!;
  }
  return out;
}

/**
 * Rows of a q or k weight ([heads·D, in], row-major) reordered from rotate-half to interleaved
 * rotary order: new row h·D + 2i + s is old row h·D + s·D/2 + i (s ∈ {0, 1}, i < D/2).
 */
export function permuteRotary(w: Float32Array, heads: number, headDim: number, inDim: number): Float32Array {
  const out = new Float32Array(w.length);
  const half = headDim / 2;
  for (let h = 0; h < heads; h++) {
    for (let i = 0; i < half; i++) {
      for (let s = 0; s < 2; s++) {
        const from = (h * headDim + s * half + i) * inDim;
        const to = (h * headDim + 2 * i + s) * inDim;
        out.set(w.subarray(from, from + inDim), to);
      }
    }
  }
  return out;
}

export interface LlamaGgufOptions {
  name?: string;
  /** Extra metadata (for example a fingerprint of the weights). */
  metadata?: [string, string][];
}

/** The GGUF contents (metadata and tensors as float32) of a Llama in `type`. */
export function llamaGguf(w: LlamaWeights, tokenizer: Bpe | GgufVocab, type: LlamaGgufType, options: LlamaGgufOptions = {}): GgufFile {
  const c = w.config;
  const { hidden: H, heads, kvHeads: KV, headDim: D, intermediate: I, vocabSize: V } = c;
  const vocab = 'tokens' in tokenizer ? tokenizer : fixtureVocab(tokenizer);
  if (vocab.tokens.length !== V) throw new Error(`tokenizer has ${vocab.tokens.length} tokens, the model ${V}`);
  const metadata: [string, GgufValue][] = [
    ['general.architecture', gguf.str('llama')],
    ['general.name', gguf.str(options.name ?? 'hearth-llama')],
    ['general.file_type', gguf.u32(FILE_TYPE[type])],
    ['general.quantization_version', gguf.u32(2)],
    ['llama.vocab_size', gguf.u32(V)],
    ['llama.context_length', gguf.u32(c.maxPositions)],
    ['llama.embedding_length', gguf.u32(H)],
    ['llama.block_count', gguf.u32(c.layers)],
    ['llama.feed_forward_length', gguf.u32(I)],
    ['llama.attention.head_count', gguf.u32(heads)],
    ['llama.attention.head_count_kv', gguf.u32(KV)],
    ['llama.attention.key_length', gguf.u32(D)],
    ['llama.attention.value_length', gguf.u32(D)],
    ['llama.rope.dimension_count', gguf.u32(D)],
    ['llama.rope.freq_base', gguf.f32(c.ropeTheta)],
    ['llama.attention.layer_norm_rms_epsilon', gguf.f32(c.rmsEps)],
    // A byte-level BPE and its pre-tokenizer regex by llama.cpp's name for it.
    ['tokenizer.ggml.model', gguf.str('gpt2')],
    ['tokenizer.ggml.pre', gguf.str(vocab.pre)],
    ['tokenizer.ggml.tokens', gguf.array(GgufType.STRING, vocab.tokens)],
    ['tokenizer.ggml.token_type', gguf.array(GgufType.INT32, vocab.types)],
    ['tokenizer.ggml.merges', gguf.array(GgufType.STRING, vocab.merges)],
    ['tokenizer.ggml.bos_token_id', gguf.u32(vocab.bos)],
    ['tokenizer.ggml.eos_token_id', gguf.u32(vocab.eos)],
    ['tokenizer.ggml.padding_token_id', gguf.u32(vocab.pad)],
    ['tokenizer.ggml.add_bos_token', gguf.bool(false)],
    ['tokenizer.ggml.add_eos_token', gguf.bool(false)],
    ...(options.metadata ?? []).map(([k, v]) => [k, gguf.str(v)] as [string, GgufValue]),
  ];
  const matrix = (name: string, data: Float32Array, inDim: number, outDim: number): GgufTensor => ({ name, ne: [inDim, outDim], type, data });
  const vector = (name: string, data: Float32Array): GgufTensor => ({ name, ne: [data.length], type: 'F32', data });
  const tensors: GgufTensor[] = [matrix('token_embd.weight', w.embed, H, V)];
  w.layers.forEach((L, i) => {
    const p = `blk.${i}`;
    tensors.push(
      vector(`${p}.attn_norm.weight`, L.inputNorm),
      matrix(`${p}.attn_q.weight`, permuteRotary(transpose(L.q, H, heads * D), heads, D, H), H, heads * D),
      matrix(`${p}.attn_k.weight`, permuteRotary(transpose(L.k, H, KV * D), KV, D, H), H, KV * D),
      matrix(`${p}.attn_v.weight`, transpose(L.v, H, KV * D), H, KV * D),
      matrix(`${p}.attn_output.weight`, transpose(L.o, heads * D, H), heads * D, H),
      vector(`${p}.ffn_norm.weight`, L.postNorm),
      matrix(`${p}.ffn_gate.weight`, transpose(L.gate, H, I), H, I),
      matrix(`${p}.ffn_up.weight`, transpose(L.up, H, I), H, I),
      matrix(`${p}.ffn_down.weight`, transpose(L.down, I, H), I, H),
    );
  });
  tensors.push(vector('output_norm.weight', w.finalNorm));
  // Tied: llama.cpp takes token_embd for lm_head when the file has no output.weight.
  if (w.lmHead.length) tensors.push(matrix('output.weight', transpose(w.lmHead, H, V), H, V));
  return { metadata, tensors };
}

/** Writes the Llama as a GGUF file of `type` at `path`. */
export function writeLlamaGguf(path: string, w: LlamaWeights, tokenizer: Bpe | GgufVocab, type: LlamaGgufType, options: LlamaGgufOptions = {}): void {
  writeGguf(path, llamaGguf(w, tokenizer, type, options));
}
