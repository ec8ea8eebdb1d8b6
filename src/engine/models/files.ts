import type { Backend } from '../../backends/types.js';
import type { CatalogEntry } from '../protocol.js';

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

export function onnxFileFor(entry: CatalogEntry, device: string): string {
  const dtype = entry.dtype?.[device as keyof NonNullable<CatalogEntry['dtype']>] ?? 'fp32';
  const suffix = DTYPE_SUFFIX[dtype];
  if (suffix === undefined) throw new Error(`unknown dtype "${dtype}" for ${entry.id}`);
  return `onnx/model${suffix}.onnx`;
}

export async function readJson<T>(backend: Backend, path: string): Promise<T | undefined> {
  if (!(await backend.exists(path))) return undefined;
  return JSON.parse(await backend.readText(path)) as T;
}

export function joinPath(folder: string, file: string): string {
  return folder.endsWith('/') ? folder + file : `${folder}/${file}`;
}

/** Decoder-only architectures the engine runs (transformers.js-style ONNX export with a KV cache). */
export const DECODER_TYPES = ['llama', 'mistral', 'qwen2', 'qwen3', 'phi3', 'granite', 'smollm3', 'olmo2'] as const;
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
  /** What the architecture can serve: a decoder serves chat (with a chat template) or completion. */
  task: 'chat' | 'completion' | 'embedding';
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

interface CheckpointConfig {
  model_type?: string;
  architectures?: string[];
  max_position_embeddings?: number;
  n_positions?: number;
  hidden_size?: number;
  intermediate_size?: number;
  num_hidden_layers?: number;
  vocab_size?: number;
  num_attention_heads?: number;
  num_key_value_heads?: number;
  head_dim?: number;
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
  const isDecoder = type !== undefined && (DECODER_TYPES as readonly string[]).includes(type);
  const isEncoder = type !== undefined && (ENCODER_TYPES as readonly string[]).includes(type);
  if (config && !type) problems.push('config.json has no model_type');
  else if (config && !isDecoder && !isEncoder) {
    problems.push(
      `model_type "${type}" is not supported (decoders: ${DECODER_TYPES.join(', ')}; encoders: ${ENCODER_TYPES.join(', ')})`,
    );
  }
  if (opts.entry?.task === 'embedding' && isDecoder) problems.push(`model_type "${type}" is a decoder, not an embedding model`);
  if (opts.entry?.task && opts.entry.task !== 'embedding' && isEncoder) problems.push(`model_type "${type}" is an encoder; it serves embeddings only`);

  // Which ONNX file is wanted: the entry's dtype for the device, else any the folder has.
  let wanted: string | undefined;
  if (opts.entry) {
    try {
      wanted = onnxFileFor(opts.entry as CatalogEntry, opts.device ?? 'cpu');
    } catch (e) {
      problems.push((e as Error).message);
    }
  }
  const candidates = opts.onnxFiles ?? Object.values(DTYPE_SUFFIX).map((s) => `onnx/model${s}.onnx`);
  const present: string[] = [];
  for (const f of wanted ? [wanted] : candidates) if (await fs.exists(joinPath(folder, f))) present.push(f);
  if (wanted && !present.length) problems.push(`${wanted} is missing (the dtype for ${opts.device ?? 'cpu'})`);
  else if (!present.length) problems.push('no ONNX model: expected onnx/model.onnx or onnx/model_<dtype>.onnx');
  if (problems.length) throw new CheckpointError(folder, problems);

  let task: CheckpointInfo['task'] = isEncoder ? 'embedding' : 'completion';
  if (isDecoder) {
    try {
      const tc = JSON.parse(await fs.readText(joinPath(folder, 'tokenizer_config.json'))) as { chat_template?: unknown };
      if (tc.chat_template) task = 'chat';
    } catch {
      // tokenizer_config.json is there (checked above); an unreadable one fails at load with its reason
    }
  }
  const c = config!;
  return {
    model_type: type!,
    task,
    context_length: c.max_position_embeddings ?? c.n_positions ?? 2048,
    class: sizeClass(c),
    onnx: present,
  };
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
