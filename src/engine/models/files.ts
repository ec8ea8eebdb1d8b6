import type { Backend, InferenceSession } from '../../backends/types.js';
import type { CatalogEntry } from '../protocol.js';
import { isCrossEncoderConfig, type ClassifierConfig } from './classifier-head.js';

/** transformers.js's file naming: onnx/model{suffix}.onnx per dtype. */
const DTYPE_SUFFIX: Record<string, string> = {
  fp32: '',
  fp16: '_fp16',
  q8: '_quantized',
  int8: '_int8',
  uint8: '_uint8',
  q4: '_q4',
  q4f16: '_q4f16',
  bnb4: '_bnb4',
};

/** The dtype `entry` asks for on `device` (devices it does not name use fp32). */
export function dtypeFor(entry: Pick<CatalogEntry, 'id' | 'dtype'>, device: string): string {
  return entry.dtype?.[device as keyof NonNullable<CatalogEntry['dtype']>] ?? 'fp32';
}

/**
 * The graphs of a checkpoint by their file's base name: a text model is one `model`; a
 * vision-language model (onnx-community's layout, as transformers.js loads it) is a decoder on
 * inputs_embeds, the token embedding table, and the vision encoder.
 */
export const VLM_GRAPHS = { decoder: 'decoder_model_merged', embed: 'embed_tokens', vision: 'vision_encoder' } as const;

/** Vision-language architectures the engine runs (VLM_GRAPHS' layout). */
export const VISION_TYPES = ['idefics3', 'qwen2_vl', 'qwen2_5_vl'] as const;
/** Speech-to-text encoder-decoders: onnx-community's Whisper layout, an encoder and a merged decoder. */
export const SPEECH_TYPES = ['whisper'] as const;
export const WHISPER_GRAPHS = { encoder: 'encoder_model', decoder: 'decoder_model_merged' } as const;

export function isSpeechType(type: string | undefined): boolean {
  return (SPEECH_TYPES as readonly (string | undefined)[]).includes(type);
}

/** The ONNX graphs (onnx/<graph>{suffix}.onnx) a checkpoint of this model_type consists of. */
export function modelGraphs(type: string | undefined): string[] {
  if (isVisionType(type)) return Object.values(VLM_GRAPHS);
  if (isSpeechType(type)) return Object.values(WHISPER_GRAPHS);
  return ['model'];
}

export function isVisionType(type: string | undefined): boolean {
  return (VISION_TYPES as readonly string[]).includes(type ?? '');
}

/**
 * A VLM's text model as config.json describes it: Idefics3's in `text_config`; Qwen2-VL's at the
 * top level beside `vision_config`, as its checkpoints have it (a `text_config` where newer ones
 * write one). Any other model's config is its own.
 */
export function textConfigOf<C extends { model_type?: string; text_config?: object }>(config: C): C {
  if (!isVisionType(config.model_type)) return config;
  return config.text_config ? ({ ...config.text_config, model_type: config.model_type } as C) : config;
}

export function onnxFileFor(entry: Pick<CatalogEntry, 'id' | 'dtype'>, device: string, graph = 'model'): string {
  return onnxFileForDtype(dtypeFor(entry, device), entry.id, graph);
}

/** `graph`: the file's base name (`model`, or one of VLM_GRAPHS). */
export function onnxFileForDtype(dtype: string, id = 'the model', graph = 'model'): string {
  const suffix = DTYPE_SUFFIX[dtype];
  if (suffix === undefined) throw new Error(`unknown dtype "${dtype}" for ${id} (known: ${Object.keys(DTYPE_SUFFIX).join(', ')})`);
  return `onnx/${graph}${suffix}.onnx`;
}

/** The dtypes whose ONNX file of `graph` a folder holds. */
export async function dtypesIn(fs: FileReader, folder: string, graph = 'model'): Promise<string[]> {
  const found: string[] = [];
  for (const [dtype, suffix] of Object.entries(DTYPE_SUFFIX)) {
    if (await fs.exists(joinPath(folder, `onnx/${graph}${suffix}.onnx`))) found.push(dtype);
  }
  return found;
}

/** Most external data chunks looked for (transformers.js's MAX_EXTERNAL_DATA_CHUNKS). */
const MAX_DATA_CHUNKS = 100;

/**
 * The external data files of an ONNX file, as transformers.js names them:
 * `model.onnx_data`, then `model.onnx_data_1`, `_2`, … (files over 2 GB are split).
 * The count comes from config.json's `transformers.js_config.use_external_data_format`
 * when it is given, else from the files present.
 */
export async function externalDataFiles(fs: FileReader, folder: string, onnxFile: string): Promise<string[]> {
  const config = await readJson<{ 'transformers.js_config'?: { use_external_data_format?: unknown } }>(fs, joinPath(folder, 'config.json'));
  const declared = chunkCount(config?.['transformers.js_config']?.use_external_data_format, onnxFile);
  const names: string[] = [];
  for (let i = 0; i < (declared ?? MAX_DATA_CHUNKS); i++) {
    const name = `${onnxFile}_data${i === 0 ? '' : `_${i}`}`;
    if (declared === undefined && !(await fs.exists(joinPath(folder, name)))) break;
    names.push(name);
  }
  return names;
}

/** transformers.js's resolveExternalDataFormat: a count, a boolean, or a count per file name. */
function chunkCount(format: unknown, onnxFile: string): number | undefined {
  if (format === undefined || format === null) return undefined;
  if (typeof format === 'object') {
    const base = onnxFile.split('/').pop()!;
    const byName = format as Record<string, unknown>;
    const v = byName[base] ?? byName[base.replace(/\.onnx$/, '')];
    return v === undefined ? undefined : Number(v);
  }
  return Number(format);
}

/** Rewrites an ONNX file's bytes before its session is made; null leaves it as it is. */
export type GraphEdit = (onnx: Uint8Array) => Uint8Array | null;

/**
 * Opens the session of the ONNX file `entry` names for the backend's device, with its
 * external data. A dtype the folder lacks is an error listing those it has. `edit`
 * (logits-pick.ts's logitsPositionEdit) rewrites the graph first, where the backend can
 * read the file's bytes; the external data stays in its files either way.
 */
export async function createModelSession(
  backend: Backend,
  folder: string,
  entry: CatalogEntry,
  deviceOutputs?: string[],
  edit?: GraphEdit,
  graph = 'model',
): Promise<InferenceSession> {
  const wanted = dtypeFor(entry, backend.device);
  const file = onnxFileForDtype(wanted, entry.id, graph);
  if (!(await backend.exists(joinPath(folder, file)))) {
    const have = await dtypesIn(backend, folder, graph);
    throw new Error(`${entry.id}: dtype "${wanted}" (${file}) is not in ${folder}; it has: ${have.join(', ') || `no onnx/${graph}*.onnx`}`);
  }
  const data = (await externalDataFiles(backend, folder, file)).map((d) => joinPath(folder, d));
  if (edit && backend.readBytes) {
    // The bytes once read are what the session gets, edited or not (the browser would read them again).
    const bytes = await backend.readBytes(joinPath(folder, file));
    return backend.createSession(edit(bytes) ?? bytes, data, deviceOutputs);
  }
  return backend.createSession(joinPath(folder, file), data, deviceOutputs);
}

/** Where newer exports keep the chat template: recent transformers versions write it there instead of into tokenizer_config.json. */
export const CHAT_TEMPLATE_FILE = 'chat_template.jinja';

/**
 * The template in the folder's chat_template.jinja, undefined when it has none. It wins over
 * tokenizer_config.json's `chat_template`, as in transformers (the file clobbers the config's
 * entry) and transformers.js (its processors pass the file's template over the tokenizer's).
 */
export async function chatTemplateFile(fs: FileReader, folder: string): Promise<string | undefined> {
  const path = joinPath(folder, CHAT_TEMPLATE_FILE);
  return (await fs.exists(path)) ? fs.readText(path) : undefined;
}

export async function readJson<T>(backend: FileReader, path: string): Promise<T | undefined> {
  if (!(await backend.exists(path))) return undefined;
  return JSON.parse(await backend.readText(path)) as T;
}

export function joinPath(folder: string, file: string): string {
  return folder.endsWith('/') ? folder + file : `${folder}/${file}`;
}

/** Decoder-only architectures the engine runs (transformers.js-style ONNX export with a KV cache). */
export const DECODER_TYPES = ['llama', 'mistral', 'qwen2', 'qwen3', 'phi3', 'gemma', 'gemma2', 'gemma3_text', 'granite', 'smollm3', 'olmo2'] as const;
/** Encoders whose mean-pooled hidden state is served as embeddings. */
export const ENCODER_TYPES = ['bert', 'nomic_bert', 'roberta', 'xlm-roberta', 'mpnet', 'modernbert', 'new'] as const;

/** A checkpoint that cannot be served, with every reason (each names what is missing or wrong). */
export class CheckpointError extends Error {
  override readonly name = 'CheckpointError';
  constructor(
    readonly folder: string,
    readonly problems: string[],
  ) {
    super(`${folder} is not a checkpoint Hearth can serve: ${problems.join('; ')}`);
  }
}

export interface CheckpointInfo {
  model_type: string;
  /** What the architecture can serve: a decoder serves chat (with a chat template) or completion; an encoder with a one-label classification head, rerank. */
  task: 'chat' | 'completion' | 'embedding' | 'rerank' | 'transcription';
  context_length: number;
  /** A rough size class ("0.3M", "7B") from the config's dimensions. */
  class: string;
  /** The ONNX files present (relative to the folder). */
  onnx: string[];
}

/** What validation reads: a folder's files. Node gives it node:fs; the engine its Backend. */
export interface FileReader {
  exists(path: string): Promise<boolean>;
  readText(path: string): Promise<string>;
}

interface CheckpointConfig extends ClassifierConfig {
  model_type?: string;
  max_target_positions?: number;
  max_position_embeddings?: number;
  n_positions?: number;
  hidden_size?: number;
  intermediate_size?: number;
  num_hidden_layers?: number;
  vocab_size?: number;
  num_attention_heads?: number;
  num_key_value_heads?: number;
  head_dim?: number;
  pad_token_id?: number;
  /** A vision-language model's text model. */
  text_config?: CheckpointConfig;
}

/** Encoders whose positions start after padding_idx (transformers' create_position_ids_from_input_ids). */
const POSITIONS_AFTER_PADDING = new Set(['roberta', 'xlm-roberta', 'mpnet']);

/** The longest input the position table takes: RoBERTa's keeps padding_idx + 1 rows before the first (514 rows, 512 tokens). */
export function contextLength(c: CheckpointConfig): number {
  // A Whisper's decoder positions: a window's prompt and reply together (448).
  if (c.max_target_positions !== undefined && isSpeechType(c.model_type)) return c.max_target_positions;
  const positions = c.max_position_embeddings ?? c.n_positions ?? 2048;
  const offset = POSITIONS_AFTER_PADDING.has(c.model_type ?? '') && c.pad_token_id !== undefined ? c.pad_token_id + 1 : 0;
  return positions - offset;
}

/**
 * Checks a local model folder before anything is loaded: config.json (with a model_type
 * the engine runs), tokenizer.json and tokenizer_config.json, and the ONNX file the
 * entry's dtype names for `device` (any onnx/model*.onnx when no entry is given).
 * Throws a CheckpointError listing every problem.
 */
export async function validateCheckpoint(
  fs: FileReader,
  folder: string,
  opts: { entry?: Pick<CatalogEntry, 'id' | 'dtype' | 'task'>; device?: string; onnxFiles?: string[] } = {},
): Promise<CheckpointInfo> {
  const problems: string[] = [];
  let config: CheckpointConfig | undefined;
  if (!(await fs.exists(folder))) throw new CheckpointError(folder, ['the folder does not exist']);
  if (!(await fs.exists(joinPath(folder, 'config.json')))) problems.push('config.json is missing');
  else {
    try {
      config = JSON.parse(await fs.readText(joinPath(folder, 'config.json'))) as CheckpointConfig;
    } catch (e) {
      problems.push(`config.json is not valid JSON (${(e as Error).message})`);
    }
  }
  for (const f of ['tokenizer.json', 'tokenizer_config.json']) {
    if (!(await fs.exists(joinPath(folder, f)))) problems.push(`${f} is missing`);
  }
  const type = config?.model_type;
  const vision = isVisionType(type);
  // A VLM's text model (its size, context and decoder) is described by its text config.
  if (vision && config) config = textConfigOf(config);
  const isDecoder = vision || (type !== undefined && (DECODER_TYPES as readonly string[]).includes(type));
  const isEncoder = type !== undefined && (ENCODER_TYPES as readonly string[]).includes(type);
  const speech = isSpeechType(type);
  if (config && !type) problems.push('config.json has no model_type');
  else if (config && !isDecoder && !isEncoder && !speech) {
    problems.push(
      `model_type "${type}" is not supported (decoders: ${DECODER_TYPES.join(', ')}; vision-language: ${VISION_TYPES.join(', ')}; encoders: ${ENCODER_TYPES.join(', ')}; speech: ${SPEECH_TYPES.join(', ')})`,
    );
  }
  if (speech && opts.entry?.task && opts.entry.task !== 'transcription') problems.push(`model_type "${type}" is a speech-to-text model; it serves transcription, not ${opts.entry.task}`);
  else if (!speech && opts.entry?.task === 'transcription' && config) problems.push(`task transcription needs a Whisper export (model_type "whisper"); config.json has ${type ?? 'no model_type'}`);
  if (speech && !(await fs.exists(joinPath(folder, 'preprocessor_config.json')))) problems.push("preprocessor_config.json is missing (Whisper's feature extractor settings)");
  const crossEncoder = config !== undefined && isEncoder && isCrossEncoderConfig(config);
  if (opts.entry?.task === 'rerank' && config && !crossEncoder) {
    problems.push(`task rerank needs an encoder with a one-label *ForSequenceClassification head; config.json has ${config.architectures?.[0] ?? 'no architectures'} (${type ?? 'no model_type'})`);
  } else if (opts.entry?.task && opts.entry.task !== 'rerank' && crossEncoder) {
    problems.push(`config.json has a one-label ${config!.architectures![0]} head: it serves rerank, not ${opts.entry.task}`);
  } else if (opts.entry?.task && opts.entry.task !== 'embedding' && opts.entry.task !== 'rerank' && isEncoder) {
    problems.push(`model_type "${type}" is an encoder; it serves embeddings only`);
  }

  // A VLM's processor reads its image settings from here (vision/vision-model.ts).
  if (vision && !(await fs.exists(joinPath(folder, 'preprocessor_config.json')))) problems.push('preprocessor_config.json is missing (a vision-language model\'s image processor settings)');

  // Which ONNX file is wanted: the entry's dtype for the device, else any the folder has.
  // A VLM needs each of its graphs in the dtype (checked for the decoder first, then the others).
  const graphs = modelGraphs(type);
  const present: string[] = [];
  for (const graph of graphs) {
    let wanted: string | undefined;
    if (opts.entry) {
      try {
        wanted = onnxFileFor(opts.entry as CatalogEntry, opts.device ?? 'cpu', graph);
      } catch (e) {
        problems.push((e as Error).message);
        break;
      }
    }
    const candidates = opts.onnxFiles?.filter((f) => f.startsWith(`onnx/${graph}`)) ?? Object.values(DTYPE_SUFFIX).map((s) => `onnx/${graph}${s}.onnx`);
    const found: string[] = [];
    for (const f of wanted ? [wanted] : candidates) if (await fs.exists(joinPath(folder, f))) found.push(f);
    present.push(...found);
    if (wanted && !found.length) {
      const have = await dtypesIn(fs, folder, graph);
      problems.push(
        `${wanted} is missing (dtype "${dtypeFor(opts.entry!, opts.device ?? 'cpu')}" for ${opts.device ?? 'cpu'}); the folder has dtypes: ${have.join(', ') || 'none'}`,
      );
    } else if (!found.length) problems.push(`no ONNX model: expected onnx/${graph}.onnx or onnx/${graph}_<dtype>.onnx`);
  }
  if (problems.length) throw new CheckpointError(folder, problems);

  let task: CheckpointInfo['task'] = speech ? 'transcription' : crossEncoder ? 'rerank' : isEncoder || (await isDecoderEmbedder(fs, folder, config!)) ? 'embedding' : 'completion';
  if (task === 'completion') {
    try {
      const tc = JSON.parse(await fs.readText(joinPath(folder, 'tokenizer_config.json'))) as { chat_template?: unknown };
      if (tc.chat_template) task = 'chat';
    } catch {
      // tokenizer_config.json is there (checked above); an unreadable one fails at load with its reason
    }
    if (await fs.exists(joinPath(folder, CHAT_TEMPLATE_FILE))) task = 'chat';
  }
  const c = config!;
  return {
    model_type: type!,
    task,
    context_length: contextLength(c),
    class: sizeClass(c),
    onnx: present,
  };
}

export function isDecoderType(type: string): boolean {
  return (DECODER_TYPES as readonly string[]).includes(type);
}

/**
 * A decoder exported as an embedder: sentence-transformers' pooling module beside it
 * (gte-Qwen2, Qwen3-Embedding), or a bare `…Model` architecture with no LM head.
 */
async function isDecoderEmbedder(fs: FileReader, folder: string, config: CheckpointConfig): Promise<boolean> {
  if (await fs.exists(joinPath(folder, '1_Pooling/config.json'))) return true;
  const arch = config.architectures?.[0];
  return arch !== undefined && /Model$/.test(arch);
}

/** Parameters estimated from a config (embeddings + attention + MLP per layer), as "7B" or "0.3M". */
export function sizeClass(c: CheckpointConfig): string {
  const h = c.hidden_size ?? 0;
  const layers = c.num_hidden_layers ?? 0;
  const ff = c.intermediate_size ?? 4 * h;
  const heads = c.num_attention_heads ?? 1;
  const headDim = c.head_dim ?? h / heads;
  const kv = (c.num_key_value_heads ?? heads) * headDim;
  const perLayer = h * heads * headDim * 2 + h * kv * 2 + 3 * h * ff;
  const n = (c.vocab_size ?? 0) * h * 2 + layers * perLayer;
  if (n >= 1e9) return `${Math.round(n / 1e9)}B`;
  if (n >= 1e6) return `${Number((n / 1e6).toPrecision(2))}M`;
  return `${Math.max(1, Math.round(n / 1e3))}K`;
}
