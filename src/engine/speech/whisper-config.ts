import type { FileReader } from '../models/files.js';
import { joinPath, readJson } from '../models/files.js';
import type { TextCodec } from '../text/codec.js';

/** What Whisper's decoding reads from config.json, generation_config.json and the tokenizer's special tokens. */
export interface WhisperConfig {
  decoderLayers: number;
  /** Positions the decoder's table has (448): a window's prompt and reply together. */
  maxTargetPositions: number;
  /** Encoder positions (1500) for a 30 s window: one a 20 ms. */
  maxSourcePositions: number;
  medianFilterWidth: number;
  ids: {
    sot: number;
    eos: number;
    translate: number;
    transcribe: number;
    startOfPrev?: number;
    noSpeech?: number;
    noTimestamps: number;
    /** The first timestamp token, `<|0.00|>`. */
    timestampBegin: number;
  };
  /** `<|en|>` → id, in the model's own ids. */
  langToId: Map<string, number>;
  multilingual: boolean;
  suppressTokens: number[];
  beginSuppressTokens: number[];
  /** The latest first timestamp, in timestamp tokens (openai-whisper's max_initial_timestamp 1.0 s = 50). */
  maxInitialTimestampIndex?: number;
  /** [layer, head] pairs whose cross-attention follows the audio. */
  alignmentHeads?: [number, number][];
}

interface Configs {
  config: { decoder_layers?: number; max_target_positions?: number; max_source_positions?: number; median_filter_width?: number; eos_token_id?: number; decoder_start_token_id?: number };
  generation: {
    lang_to_id?: Record<string, number>;
    task_to_id?: Record<string, number>;
    no_timestamps_token_id?: number;
    is_multilingual?: boolean;
    suppress_tokens?: number[];
    begin_suppress_tokens?: number[];
    max_initial_timestamp_index?: number | null;
    alignment_heads?: [number, number][];
    decoder_start_token_id?: number;
    eos_token_id?: number | number[];
    prev_sot_token_id?: number;
  };
}

export async function readWhisperConfig(files: FileReader, folder: string, codec: TextCodec): Promise<WhisperConfig> {
  const config = (await readJson<Configs['config']>(files, joinPath(folder, 'config.json'))) ?? {};
  const generation = (await readJson<Configs['generation']>(files, joinPath(folder, 'generation_config.json'))) ?? {};
  const id = (token: string) => codec.tokenId(token);
  const need = (token: string, from?: number) => {
    const v = from ?? id(token);
    if (v === undefined) throw new Error(`the tokenizer has no ${token} token`);
    return v;
  };
  const noTimestamps = need('<|notimestamps|>', generation.no_timestamps_token_id);
  const eos = Array.isArray(generation.eos_token_id) ? generation.eos_token_id[0] : (generation.eos_token_id ?? config.eos_token_id);
  return {
    decoderLayers: config.decoder_layers ?? 0,
    maxTargetPositions: config.max_target_positions ?? 448,
    maxSourcePositions: config.max_source_positions ?? 1500,
    medianFilterWidth: config.median_filter_width ?? 7,
    ids: {
      sot: need('<|startoftranscript|>', generation.decoder_start_token_id ?? config.decoder_start_token_id),
      eos: need('<|endoftext|>', eos),
      translate: need('<|translate|>', generation.task_to_id?.translate),
      transcribe: need('<|transcribe|>', generation.task_to_id?.transcribe),
      startOfPrev: generation.prev_sot_token_id ?? id('<|startofprev|>'),
      noSpeech: id('<|nospeech|>') ?? id('<|nocaptions|>'),
      noTimestamps,
      timestampBegin: noTimestamps + 1,
    },
    langToId: new Map(Object.entries(generation.lang_to_id ?? {})),
    multilingual: generation.is_multilingual ?? Object.keys(generation.lang_to_id ?? {}).length > 0,
    suppressTokens: generation.suppress_tokens ?? [],
    beginSuppressTokens: generation.begin_suppress_tokens ?? [],
    maxInitialTimestampIndex: generation.max_initial_timestamp_index ?? undefined,
    alignmentHeads: generation.alignment_heads,
  };
}
