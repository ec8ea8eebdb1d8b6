// svc/tiny-whisper: a tiny random-weight Whisper in the layout of onnx-community's
// transformers.js exports with cross-attention outputs (onnx-community/whisper-tiny_timestamped):
//   config.json, generation_config.json (lang_to_id, task_to_id, alignment_heads, suppress lists),
//   preprocessor_config.json (WhisperFeatureExtractor, 80 mel bins, 30 s windows),
//   tokenizer.json + tokenizer_config.json (WhisperTokenizer; Whisper's multilingual specials),
//   onnx/encoder_model.onnx, onnx/decoder_model_merged.onnx (whisper/graphs.ts).
// The weights are designed (whisper/design.ts) so that greedy transcripts are short, depend on
// the audio, end with EOS, and carry timestamps when asked.
import type { FixtureFiles } from '../llama/fixture.js';
import type { Bpe } from '../tokenizer/bpe.js';
import { ALIGNMENT_HEADS, SCHEDULE, TINY_WHISPER_DIMS, designTinyWhisper } from '../whisper/design.js';
import { decoderInputNames, decoderMergedGraph, decoderOutputNames, encoderGraph } from '../whisper/graphs.js';
import { WHISPER_LANGUAGES, suppressTokens, whisperTokenizerConfig, whisperTokenizerJson, whisperVocab } from '../whisper/vocab.js';
import { parameterCount, type WhisperWeights } from '../whisper/weights.js';

export { ALIGNMENT_HEADS, SCHEDULE, TINY_WHISPER_DIMS, designTinyWhisper, decoderInputNames, decoderOutputNames, parameterCount, whisperVocab };

/** The fixture's weights over `bpe` (the project's fixtureTokenizer()), for tests that check them. */
export function tinyWhisperWeights(bpe: Bpe, seed: number): WhisperWeights {
  return designTinyWhisper(whisperVocab(bpe), seed);
}

const json = (v: unknown) => JSON.stringify(v, null, 2) + '\n';

/** The folder's files; `bpe` gives the text vocabulary (fixtures.ts passes fixtureTokenizer()). */
export function whisperFixtureFiles(bpe: Bpe, seed: number): FixtureFiles {
  const vocab = whisperVocab(bpe);
  const w = designTinyWhisper(vocab, seed);
  const d = w.dims;
  const suppress = suppressTokens(vocab);
  const space = vocab.ids['Ġ']!;
  const beginSuppress = [space, vocab.eot];
  const config = {
    _name_or_path: 'svc/tiny-whisper',
    activation_dropout: 0.0,
    activation_function: 'gelu',
    apply_spec_augment: false,
    architectures: ['WhisperForConditionalGeneration'],
    attention_dropout: 0.0,
    begin_suppress_tokens: beginSuppress,
    bos_token_id: vocab.eot,
    classifier_proj_size: 256,
    d_model: d.dModel,
    decoder_attention_heads: d.decoderHeads,
    decoder_ffn_dim: d.decoderFfn,
    decoder_layerdrop: 0.0,
    decoder_layers: d.decoderLayers,
    decoder_start_token_id: vocab.sot,
    dropout: 0.0,
    encoder_attention_heads: d.encoderHeads,
    encoder_ffn_dim: d.encoderFfn,
    encoder_layerdrop: 0.0,
    encoder_layers: d.encoderLayers,
    eos_token_id: vocab.eot,
    init_std: 0.02,
    is_encoder_decoder: true,
    max_length: d.targetPositions,
    max_source_positions: d.sourcePositions,
    max_target_positions: d.targetPositions,
    median_filter_width: 7,
    model_type: 'whisper',
    num_hidden_layers: d.encoderLayers,
    num_mel_bins: d.melBins,
    pad_token_id: vocab.eot,
    scale_embedding: false,
    torch_dtype: 'float32',
    transformers_version: '4.38.2',
    use_cache: true,
    use_weighted_layer_sum: false,
    vocab_size: d.vocabSize,
  };
  const generation = {
    alignment_heads: ALIGNMENT_HEADS,
    begin_suppress_tokens: beginSuppress,
    bos_token_id: vocab.eot,
    decoder_start_token_id: vocab.sot,
    eos_token_id: vocab.eot,
    forced_decoder_ids: null,
    is_multilingual: true,
    lang_to_id: Object.fromEntries(WHISPER_LANGUAGES.map((l) => [`<|${l}|>`, vocab.ids[`<|${l}|>`]!])),
    max_initial_timestamp_index: 50,
    max_length: d.targetPositions,
    no_timestamps_token_id: vocab.noTimestamps,
    pad_token_id: vocab.eot,
    prev_sot_token_id: vocab.startOfPrev,
    return_timestamps: false,
    suppress_tokens: suppress,
    task_to_id: { transcribe: vocab.transcribe, translate: vocab.translate },
    transformers_version: '4.38.2',
  };
  const preprocessor = {
    chunk_length: 30,
    feature_extractor_type: 'WhisperFeatureExtractor',
    feature_size: d.melBins,
    hop_length: 160,
    n_fft: 400,
    n_samples: 480000,
    nb_max_frames: 3000,
    padding_side: 'right',
    padding_value: 0.0,
    processor_class: 'WhisperProcessor',
    return_attention_mask: false,
    sampling_rate: 16000,
  };
  const specialTokens = {
    additional_special_tokens: (whisperTokenizerConfig(vocab) as { additional_special_tokens: string[] }).additional_special_tokens,
    bos_token: '<|endoftext|>',
    eos_token: '<|endoftext|>',
    pad_token: '<|endoftext|>',
    unk_token: '<|endoftext|>',
  };
  return {
    'config.json': json(config),
    'generation_config.json': json(generation),
    'preprocessor_config.json': json(preprocessor),
    'special_tokens_map.json': json(specialTokens),
    'tokenizer.json': JSON.stringify(whisperTokenizerJson(vocab)),
    'tokenizer_config.json': json(whisperTokenizerConfig(vocab)),
    'onnx/encoder_model.onnx': encoderGraph(w).toBytes(),
    'onnx/decoder_model_merged.onnx': decoderMergedGraph(w).toBytes(),
  };
}

/** Sizes the tests read. */
export const TINY_WHISPER = { dims: TINY_WHISPER_DIMS, schedule: SCHEDULE, alignmentHeads: ALIGNMENT_HEADS };
