import type { KvArray, KvType, PaddingSide } from '../../backends/kv.js';
import type { InferenceSession, Tensor } from '../../backends/types.js';
import { LOGITS_POSITION_INPUT } from './logits-pick.js';

export type { KvArray, KvType, PaddingSide };


/**
 * What a decoder graph takes and gives, read from the session as transformers.js's
 * `decoder_forward` does: only the inputs the graph declares are fed, each in its type.
 */
export interface DecoderInterface {
  layers: number;
  kvHeads: number;
  headDim: number;
  kvType: KvType;
  logitsType: KvType;
  /** Fed only when the graph declares it. */
  positionIds: boolean;
  /** transformers.js starts Gemma 3's positions at 1 (`create_position_ids`' start_index). */
  positionStart: number;
  /** position_ids is [3, batch, seq]: multimodal rotary positions (Qwen2-VL's M-RoPE, vision/mrope.ts). */
  multimodalPositions: boolean;
  /** Fed as 1 so that only the last position's logits come back. */
  numLogitsToKeep: boolean;
  /** Hearth's own edit at load (logits-pick.ts): the position of each row whose logits come back. */
  logitsPosition: boolean;
  /** Merged decoders: true once a past is fed. */
  useCacheBranch: boolean;
  /**
   * The side a batch's rows are padded on: 'right' for graphs with GroupQueryAttention
   * (onnxruntime-genai's builder), which reads each row's cache as a prefix, else 'left'.
   */
  padding: PaddingSide;
  /**
   * Whether one run may take several tokens of several rows after a past. GroupQueryAttention
   * refuses it ("batch_size must be 1 when sequence_length > 1 and past context is given").
   */
  batchesPrefixedChunks: boolean;
  /**
   * Whether a position's output is its own, whatever else the run holds. Not where activations
   * are quantized per tensor at run time (DynamicQuantizeLinear: q8 exports), whose scale comes
   * from every position of the run: there a step that verifies drafts would not give the plain
   * step's logits, so speculative decoding stays off.
   */
  positionsIndependent: boolean;
  /** Where the graph takes inputs_embeds instead of input_ids (a VLM's decoder): their type and width. */
  inputsEmbeds?: { type: KvType; hidden: number };
}

const FLOAT_TYPES = new Set<string>(['float32', 'float16']);

/** Model types whose position ids start at 1 in transformers.js. */
const POSITIONS_FROM_ONE = new Set(['paligemma', 'gemma3_text', 'gemma3']);

/** The config.json fields the interface falls back on where the graph's shapes are symbolic. */
export interface DecoderConfig {
  model_type?: string;
  num_attention_heads: number;
  num_key_value_heads?: number;
  hidden_size: number;
  head_dim?: number;
}

/**
 * Reads a decoder's interface; throws naming what the graph lacks when it is not one Hearth can feed.
 * `output` is `logits` for a causal LM, `last_hidden_state` for a decoder embedder's export
 * (its `logitsType` is then that output's type). `ops`: the op types of the graph
 * (graph-ops.ts), which decide how batches are laid out; unknown, plain attention is assumed.
 */
export function readDecoderInterface(session: InferenceSession, config: DecoderConfig, output = 'logits', ops: ReadonlySet<string> = new Set()): DecoderInterface {
  const inputs = new Map(session.inputMetadata.map((m) => [m.name, m]));
  const outputs = new Map(session.outputMetadata.map((m) => [m.name, m]));
  const problems: string[] = [];
  // A VLM's decoder takes embeddings (the token table's, with image features spliced in) instead of ids.
  const embeds = inputs.has('inputs_embeds') && !inputs.has('input_ids');
  for (const name of [embeds ? 'inputs_embeds' : 'input_ids', 'attention_mask']) if (!inputs.has(name)) problems.push(`no input "${name}"`);
  if (!outputs.has(output)) problems.push(`no output "${output}"`);
  const layers = [...inputs.keys()].filter((n) => /^past_key_values\.\d+\.key$/.test(n)).length;
  if (layers === 0) problems.push('no past_key_values.N.key inputs (an export without a KV cache)');
  for (const name of inputs.keys()) {
    if (!KNOWN_INPUT.test(name)) problems.push(`an input Hearth does not know how to feed: "${name}"`);
  }
  if (problems.length) {
    throw new Error(`the ONNX graph is not a decoder Hearth can feed: ${problems.join('; ')} (inputs: ${[...inputs.keys()].join(', ')})`);
  }
  const past = tensorMeta(inputs.get('past_key_values.0.key')!);
  const kvType = floatType(past.type, 'past_key_values.0.key');
  const logitsType = floatType(tensorMeta(outputs.get(output)!).type, output);
  // [batch, kv_heads, past_len, head_dim]: fixed numbers in real exports, else the config's.
  const [, heads, , dim] = past.shape;
  const fusedAttention = ops.has('GroupQueryAttention');
  const embedsMeta = embeds ? tensorMeta(inputs.get('inputs_embeds')!) : undefined;
  const hidden = embedsMeta?.shape[2];
  return {
    inputsEmbeds: embedsMeta ? { type: floatType(embedsMeta.type, 'inputs_embeds'), hidden: typeof hidden === 'number' ? hidden : config.hidden_size } : undefined,
    layers,
    kvHeads: typeof heads === 'number' ? heads : (config.num_key_value_heads ?? config.num_attention_heads),
    headDim: typeof dim === 'number' ? dim : (config.head_dim ?? config.hidden_size / config.num_attention_heads),
    kvType,
    logitsType,
    positionIds: inputs.has('position_ids'),
    positionStart: POSITIONS_FROM_ONE.has(config.model_type ?? '') ? 1 : 0,
    multimodalPositions: inputs.has('position_ids') && tensorMeta(inputs.get('position_ids')!).shape.length === 3,
    numLogitsToKeep: inputs.has('num_logits_to_keep'),
    logitsPosition: inputs.has(LOGITS_POSITION_INPUT),
    useCacheBranch: inputs.has('use_cache_branch'),
    padding: fusedAttention ? 'right' : 'left',
    batchesPrefixedChunks: !fusedAttention,
    positionsIndependent: !ops.has('DynamicQuantizeLinear'),
  };
}

const KNOWN_INPUT = /^(input_ids|inputs_embeds|attention_mask|position_ids|num_logits_to_keep|hearth_logits_position|use_cache_branch|past_key_values\.\d+\.(key|value))$/;

function tensorMeta(m: InferenceSession.ValueMetadata): { type: string; shape: readonly (number | string)[] } {
  return m.isTensor ? m : { type: 'unknown', shape: [] };
}

function floatType(type: string, name: string): KvType {
  if (!FLOAT_TYPES.has(type)) throw new Error(`"${name}" has element type ${type}; Hearth feeds float32 or float16`);
  return type as KvType;
}

/** An empty array of the KV type (the past of a first step). */
export function emptyKv(type: KvType): KvArray {
  return type === 'float16' ? new Uint16Array(0) : new Float32Array(0);
}

/** A new zeroed array of the same type as `like`: KV is copied in its own type, never widened. */
export function allocLike(like: KvArray, length: number): KvArray {
  return new (like.constructor as new (n: number) => KvArray)(length);
}

/** Logits (or hidden states) as float32: float16 ones are converted once, here. */
export function toFloat32(t: Tensor, from: number, to: number): Float32Array {
  const data = t.data as Float32Array | Uint16Array;
  if (data instanceof Float32Array) return data.subarray(from, to);
  if (data instanceof Uint16Array) {
    const table = halfTable();
    const out = new Float32Array(to - from);
    for (let i = from; i < to; i++) out[i - from] = table[data[i]];
    return out;
  }
  return Float32Array.from((data as Uint16Array).subarray(from, to) as ArrayLike<number>); // a Float16Array
}

let halves: Float32Array | undefined;
/** Every binary16 value by its bits (256 KiB, made once): a row of 151,936 logits converts in a fraction of a millisecond. */
function halfTable(): Float32Array {
  return (halves ??= Float32Array.from({ length: 65536 }, (_, h) => halfToFloat(h)));
}

/** IEEE 754 binary16 bits → number. */
export function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 31) return frac ? NaN : sign * Infinity;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}
