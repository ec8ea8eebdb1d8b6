// A Whisper checkpoint served for speech to text: its graphs, its decoding rules, and its
// feature extractor (transformers.js's WhisperFeatureExtractor, so features equal the
// reference's). transcribe() checks a request, decodes its audio and cuts it into windows;
// the batcher decodes them with every other request's.
import { WhisperFeatureExtractor } from '@huggingface/transformers';
import type { Backend } from '../../backends/types.js';
import { EngineError } from '../errors.js';
import { joinPath, readJson } from '../models/files.js';
import type { CatalogEntry, TranscribeRequest, TranscribeResult, TranscriptDelta } from '../protocol.js';
import type { TextCodec } from '../text/codec.js';
import { decodeAudio } from './decode-audio.js';
import { JoinedStream } from './joined-stream.js';
import { languageCode } from './languages.js';
import { type FeatureExtractor, SpeechBatcher } from './speech-batcher.js';
import { audioWindows } from './windows.js';
import { WhisperGraphs } from './whisper-graphs.js';
import { readWhisperConfig, type WhisperConfig } from './whisper-config.js';

export const SAMPLE_RATE = 16_000;
/** The most prompt tokens after `<|startofprev|>`: openai-whisper's n_text_ctx // 2 - 1. */
const MAX_PROMPT_TOKENS = 223;

export class SpeechModel {
  private readonly batcher: SpeechBatcher;

  private constructor(
    readonly codec: TextCodec,
    readonly config: WhisperConfig,
    private readonly graphs: WhisperGraphs,
    private readonly features: FeatureExtractor,
  ) {
    this.batcher = new SpeechBatcher(graphs, config, codec, features, SAMPLE_RATE);
  }

  static async load(backend: Backend, folder: string, entry: CatalogEntry, codec: TextCodec): Promise<SpeechModel> {
    const config = await readWhisperConfig(backend, folder, codec);
    const modelConfig = (await readJson<{ decoder_attention_heads?: number; d_model?: number }>(backend, joinPath(folder, 'config.json'))) ?? {};
    const preprocessor = await readJson<Record<string, unknown>>(backend, joinPath(folder, 'preprocessor_config.json'));
    if (!preprocessor) throw new Error(`${entry.id}: preprocessor_config.json is missing (Whisper's feature extractor settings)`);
    const features = new WhisperFeatureExtractor(preprocessor) as unknown as FeatureExtractor;
    const graphs = await WhisperGraphs.load(backend, folder, entry, modelConfig);
    const model = new SpeechModel(codec, config, graphs, features);
    try {
      await model.warmUp();
    } catch (e) {
      await graphs.dispose();
      throw new Error(`${entry.id}: the warm-up run failed, so the graphs cannot be served: ${e instanceof Error ? e.message : String(e)}`);
    }
    return model;
  }

  /** Whether word timestamps can be had: the decoder gives cross-attentions and the config names the alignment heads. */
  get hasWordTimes(): boolean {
    return this.graphs.crossAttentionOutputs.length > 0 && (this.config.alignmentHeads?.length ?? 0) > 0;
  }

  /** One encoder run and one decoder step on silence: a graph that loads but cannot run fails at load. */
  private async warmUp(): Promise<void> {
    const { data, dims } = (await this.features(new Float32Array(SAMPLE_RATE / 10))).input_features;
    const states = await this.graphs.encode(data, dims);
    const cache = this.graphs.emptyCache(1);
    try {
      await this.graphs.step([[this.config.ids.sot]], states, cache, this.hasWordTimes);
    } finally {
      this.graphs.disposeCache(cache);
      states.dispose();
    }
  }

  cancel(id: string): void {
    this.batcher.cancel(id);
  }

  async transcribe(req: TranscribeRequest, onDelta?: (ev: TranscriptDelta) => void): Promise<TranscribeResult> {
    if (req.timestamps === 'word' && !this.hasWordTimes) {
      throw new EngineError('invalid_value', 'Word timestamps need a Whisper export whose decoder gives cross_attentions and a generation_config with alignment_heads; this model has none', 'timestamp_granularities');
    }
    const language = this.languageOf(req.language);
    const samples = req.samples ?? (await decodeAudio(req.audio)).samples;
    if (samples.length === 0) throw new EngineError('invalid_value', 'The audio file holds no samples', 'file');
    const seconds = samples.length / SAMPLE_RATE;
    if (req.max_seconds !== undefined && seconds > req.max_seconds) {
      throw new EngineError('invalid_value', `The audio is ${seconds.toFixed(1)} s long; this server takes at most ${req.max_seconds} s a request`, 'file');
    }
    return new Promise<TranscribeResult>((resolve, reject) =>
      this.batcher.submit({ req, samples, windows: audioWindows(samples, SAMPLE_RATE), prefix: this.promptPrefix(req.prompt), language, stream: new JoinedStream(onDelta, req.logprobs === true), resolve, reject }),
    );
  }

  /** The request's language as a code the model has a token for; absent: detected later. */
  private languageOf(language: string | undefined): string | undefined {
    if (language === undefined || language === '') return undefined;
    const code = languageCode(language);
    if (!code || (this.config.multilingual && !this.config.langToId.has(`<|${code}|>`))) {
      throw new EngineError('invalid_value', `Language "${language}" is not one this model knows; send an ISO-639-1 code such as "en"`, 'language');
    }
    return code;
  }

  /** `<|startofprev|>` and the prompt's last tokens, as openai-whisper conditions on earlier text. */
  private promptPrefix(prompt: string | undefined): number[] {
    const sop = this.config.ids.startOfPrev;
    if (!prompt || !prompt.trim() || sop === undefined) return [];
    return [sop, ...this.codec.encodeText(' ' + prompt.trim(), false).slice(-MAX_PROMPT_TOKENS)];
  }

  async dispose(): Promise<void> {
    await this.graphs.dispose();
  }
}

export type { WhisperConfig };
