// The tiny-whisper fixture (models/exports/whisper.ts) in onnx-community's Whisper export layout,
// proven on transformers.js, the reference: its automatic-speech-recognition pipeline loads the
// folder offline and transcribes 16 kHz samples into short texts that depend on the audio, with
// segments (return_timestamps: true), words (return_timestamps: "word", from the cross_attentions
// outputs and alignment_heads) and the translate task; the sessions declare exactly the names of
// the real exports (Optimum's merged decoder with cross attentions).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AutoTokenizer, Tensor, env, pipeline, type AutomaticSpeechRecognitionPipeline, type PreTrainedTokenizer } from '@huggingface/transformers';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_BUILDERS, writeFixtureFolder } from '../../models/fixtures.js';
import { TINY_WHISPER_DIMS } from '../../models/exports/whisper.js';
import { WHISPER_LANGUAGES } from '../../models/whisper/vocab.js';
import { chirp, noise, tone } from '../helpers/signals.js';

const NAME = 'tiny-whisper';
const { decoderLayers: LAYERS, decoderHeads: HEADS, dModel: D } = TINY_WHISPER_DIMS;
const HEAD_DIM = D / HEADS;

interface Chunk {
  text: string;
  timestamp: [number, number | null];
}
interface Transcript {
  text: string;
  chunks?: Chunk[];
}

let dir: string;
let buildMs: number;
let asr: AutomaticSpeechRecognitionPipeline;
let tokenizer: PreTrainedTokenizer;

const readJson = (file: string) => JSON.parse(readFileSync(join(dir, NAME, file), 'utf8'));
const transcribe = async (audio: Float32Array, options: Record<string, unknown> = {}) =>
  (await asr(audio, { language: 'en', task: 'transcribe', ...options } as never)) as Transcript;

const SIGNALS = { sine: tone(2, 440), noise: noise(1, 7), chirp: chirp(5, 200, 2000), low: tone(3, 150) };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tiny-whisper-'));
  const t0 = performance.now();
  writeFixtureFolder(dir, NAME, FIXTURE_BUILDERS[NAME]!());
  buildMs = performance.now() - t0;
  env.localModelPath = `${dir}/`;
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  asr = (await pipeline('automatic-speech-recognition', NAME, { device: 'cpu', dtype: 'fp32', local_files_only: true })) as AutomaticSpeechRecognitionPipeline;
  tokenizer = await AutoTokenizer.from_pretrained(NAME, { local_files_only: true });
}, 120_000);

afterAll(async () => {
  await asr?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('tiny-whisper: the folder', () => {
  it('is written quickly and stays small', () => {
    expect(buildMs).toBeLessThan(10_000);
    const onnx = ['onnx/encoder_model.onnx', 'onnx/decoder_model_merged.onnx'].map((f) => readFileSync(join(dir, NAME, f)).length);
    expect(onnx.reduce((a, b) => a + b)).toBeLessThan(5 * 2 ** 20);
  });

  it("has Whisper's multilingual specials in Whisper's order, then the 1501 timestamps", () => {
    const id = (t: string) => tokenizer.convert_tokens_to_ids(t) as number;
    const eot = id('<|endoftext|>');
    const order = ['<|endoftext|>', '<|startoftranscript|>', ...WHISPER_LANGUAGES.map((l) => `<|${l}|>`), '<|translate|>', '<|transcribe|>', '<|startoflm|>', '<|startofprev|>', '<|nospeech|>', '<|notimestamps|>'];
    expect(order.map(id)).toEqual(order.map((_, i) => eot + i));
    expect(WHISPER_LANGUAGES).toHaveLength(99);
    expect(WHISPER_LANGUAGES.at(-1)).toBe('su');
    const first = id('<|0.00|>');
    expect(first).toBe(id('<|notimestamps|>') + 1);
    expect(id('<|30.00|>')).toBe(first + 1500);
    expect(readJson('config.json').vocab_size).toBe(first + 1501);
    // Timestamps are added tokens but not special (transformers.js takes timestamp_begin after the last special).
    expect(Math.max(...tokenizer.all_special_ids.map(Number))).toBe(id('<|notimestamps|>'));
    // Text is byte-level BPE: any text round-trips.
    const text = ' Hello, wörld! 42';
    expect(tokenizer.decode(tokenizer.encode(text, { add_special_tokens: false }))).toBe(text);
  });

  it("carries whisper-tiny's configs with the fixture's ids", () => {
    const config = readJson('config.json');
    const gen = readJson('generation_config.json');
    const id = (t: string) => tokenizer.convert_tokens_to_ids(t) as number;
    expect(config).toMatchObject({ model_type: 'whisper', architectures: ['WhisperForConditionalGeneration'], num_mel_bins: 80, max_source_positions: 1500, max_target_positions: 448 });
    expect(config).toMatchObject({ d_model: D, decoder_layers: LAYERS, decoder_attention_heads: HEADS, decoder_start_token_id: id('<|startoftranscript|>'), eos_token_id: id('<|endoftext|>') });
    expect(Object.keys(gen.lang_to_id)).toHaveLength(99);
    for (const [token, value] of Object.entries(gen.lang_to_id)) expect(value, token).toBe(id(token));
    expect(gen.task_to_id).toEqual({ transcribe: id('<|transcribe|>'), translate: id('<|translate|>') });
    expect(gen).toMatchObject({ no_timestamps_token_id: id('<|notimestamps|>'), prev_sot_token_id: id('<|startofprev|>'), is_multilingual: true, max_length: 448, forced_decoder_ids: null });
    expect(gen.begin_suppress_tokens).toEqual([id('Ġ'), id('<|endoftext|>')]);
    expect(gen.suppress_tokens).toEqual(expect.arrayContaining([id('"'), id('#'), id('<|startoftranscript|>'), id('<|nospeech|>')]));
    for (const [layer, head] of gen.alignment_heads) {
      expect(layer).toBeLessThan(LAYERS);
      expect(head).toBeLessThan(HEADS);
    }
    expect(readJson('preprocessor_config.json')).toMatchObject({ feature_extractor_type: 'WhisperFeatureExtractor', feature_size: 80, hop_length: 160, n_fft: 400, chunk_length: 30, n_samples: 480000, nb_max_frames: 3000, sampling_rate: 16000 });
    expect(readJson('tokenizer_config.json').tokenizer_class).toBe('WhisperTokenizer');
  });

  it("declares exactly the inputs and outputs of Optimum's Whisper exports with cross attentions", async () => {
    const encoder = await ort.InferenceSession.create(join(dir, NAME, 'onnx/encoder_model.onnx'));
    const decoder = await ort.InferenceSession.create(join(dir, NAME, 'onnx/decoder_model_merged.onnx'));
    try {
      expect(encoder.inputNames).toEqual(['input_features']);
      expect(encoder.outputNames).toEqual(['last_hidden_state']);
      const kv = (prefix: string) => Array.from({ length: LAYERS }, (_, i) => ['decoder.key', 'decoder.value', 'encoder.key', 'encoder.value'].map((s) => `${prefix}.${i}.${s}`)).flat();
      expect(decoder.inputNames).toEqual(['input_ids', 'encoder_hidden_states', ...kv('past_key_values'), 'use_cache_branch']);
      expect(decoder.outputNames).toEqual(['logits', ...kv('present'), ...Array.from({ length: LAYERS }, (_, i) => `cross_attentions.${i}`)]);
      const shape = (s: ort.InferenceSession, name: string) => (s.inputMetadata.find((m) => m.name === name) as { shape: readonly (number | string)[] }).shape;
      expect(shape(encoder, 'input_features')).toEqual(['batch_size', 'feature_size', 'encoder_sequence_length']);
      expect(shape(decoder, 'encoder_hidden_states')).toEqual(['batch_size', 'encoder_sequence_length / 2', D]);
      expect(shape(decoder, 'past_key_values.0.decoder.key')).toEqual(['batch_size', HEADS, 'past_decoder_sequence_length', HEAD_DIM]);
      expect(shape(decoder, 'past_key_values.0.encoder.value')).toEqual(['batch_size', HEADS, 'encoder_sequence_length_out', HEAD_DIM]);
      expect(shape(decoder, 'use_cache_branch')).toEqual([1]);
    } finally {
      await encoder.release();
      await decoder.release();
    }
  });

  it('gives with its cache (use_cache_branch true) what one pass over the whole sequence gives', async () => {
    const encoder = await ort.InferenceSession.create(join(dir, NAME, 'onnx/encoder_model.onnx'));
    const decoder = await ort.InferenceSession.create(join(dir, NAME, 'onnx/decoder_model_merged.onnx'));
    try {
      const features = (await asr.processor(SIGNALS.chirp)) as { input_features: { data: Float32Array; dims: number[] } };
      const states = (await encoder.run({ input_features: new ort.Tensor('float32', features.input_features.data, features.input_features.dims) })).last_hidden_state!;
      const id = (t: string) => tokenizer.convert_tokens_to_ids(t) as number;
      const ids = [id('<|startoftranscript|>'), id('<|en|>'), id('<|transcribe|>'), id('<|0.00|>'), id('Ġthe'), id('Ġcat')];
      const empty = new ort.Tensor('float32', new Float32Array(0), [1, HEADS, 0, HEAD_DIM]);
      const run = async (tokens: number[], past: Record<string, ort.Tensor> | undefined) => {
        const feeds: Record<string, ort.Tensor> = {
          input_ids: new ort.Tensor('int64', BigInt64Array.from(tokens, BigInt), [1, tokens.length]),
          encoder_hidden_states: states,
          use_cache_branch: new ort.Tensor('bool', [past !== undefined], [1]),
        };
        for (const name of decoder.inputNames) if (name.startsWith('past_key_values.')) feeds[name] = past?.[name.replace('past_key_values', 'present')] ?? empty;
        return decoder.run(feeds);
      };
      const whole = await run(ids, undefined);
      let out = await run(ids.slice(0, 3), undefined);
      // The present encoder K/V of the first pass, kept as transformers.js keeps them (the cache branch returns empty ones).
      const encoderKv = Object.fromEntries(Object.entries(out).filter(([n]) => n.includes('.encoder.')));
      const V = whole.logits!.dims[2]!;
      const lastCross = `cross_attentions.${LAYERS - 1}`;
      const F = whole[lastCross]!.dims[3]!;
      for (let p = 3; p < ids.length; p++) {
        out = await run([ids[p]!], { ...(out as Record<string, ort.Tensor>), ...encoderKv });
        expect(out['present.0.encoder.key']!.dims).toEqual([0, HEADS, 1, HEAD_DIM]);
        expect(out['present.0.decoder.key']!.dims).toEqual([1, HEADS, p + 1, HEAD_DIM]);
        const step = out.logits!.data as Float32Array;
        const ref = (whole.logits!.data as Float32Array).subarray(p * V, (p + 1) * V);
        let diff = 0;
        for (let t = 0; t < V; t++) diff = Math.max(diff, Math.abs(step[t]! - ref[t]!));
        expect(diff).toBeLessThan(1e-3);
        const cross = out[lastCross]!.data as Float32Array;
        const crossRef = (whole[lastCross]!.data as Float32Array).subarray(p * F, (p + 1) * F); // head 0
        expect(Math.max(...cross.subarray(0, F).map((x, j) => Math.abs(x - crossRef[j]!)))).toBeLessThan(1e-5);
      }
    } finally {
      await encoder.release();
      await decoder.release();
    }
  });
});

describe('tiny-whisper on the automatic-speech-recognition pipeline', () => {
  it('transcribes each signal into a short text of words, different signals into different texts', async () => {
    const texts: string[] = [];
    for (const audio of Object.values(SIGNALS)) {
      const { text } = await transcribe(audio);
      const words = text.trim().split(/\s+/);
      expect(words.length).toBeGreaterThanOrEqual(3);
      expect(words.length).toBeLessThanOrEqual(40);
      expect(text).not.toContain('<|');
      texts.push(text);
    }
    expect(new Set(texts).size).toBe(texts.length);
    // Deterministic: the same audio again gives the same text.
    expect((await transcribe(SIGNALS.sine)).text).toBe(texts[0]);
  });

  it('ends with <|endoftext|> long before max_length (448)', async () => {
    const features = (await asr.processor(SIGNALS.chirp)) as { input_features: unknown };
    const out = (await asr.model.generate({ inputs: features.input_features, language: 'en', task: 'transcribe' } as never)) as { dims: number[]; data: BigInt64Array };
    const ids = Array.from(out.data, Number);
    expect(ids.at(-1)).toBe(tokenizer.convert_tokens_to_ids('<|endoftext|>'));
    expect(ids.length).toBeLessThan(64);
  });

  it('counts its steps from <|startoftranscript|>: a prompt before it (<|startofprev|> …) leaves the length as it is', async () => {
    const features = (await asr.processor(SIGNALS.sine)) as { input_features: unknown };
    const id = (t: string) => tokenizer.convert_tokens_to_ids(t) as number;
    const start = [id('<|startoftranscript|>'), id('<|en|>'), id('<|transcribe|>'), id('<|notimestamps|>')];
    const prompt = [id('<|startofprev|>'), ...tokenizer.encode(' a prompt of some words, as a previous window would give', { add_special_tokens: false })];
    const generated = async (prefix: number[]) => {
      const out = (await asr.model.generate({ inputs: features.input_features, decoder_input_ids: prefix } as never)) as { data: BigInt64Array };
      return Array.from(out.data, Number).slice(prefix.length);
    };
    const plain = await generated(start);
    const prompted = await generated([...prompt, ...start]);
    expect(prompted.at(-1)).toBe(id('<|endoftext|>'));
    expect(prompted.length).toBe(plain.length);
  });

  it('gives segments with timestamps (return_timestamps: true)', async () => {
    for (const audio of [SIGNALS.sine, SIGNALS.chirp]) {
      const { text, chunks } = await transcribe(audio, { return_timestamps: true });
      expect(text.trim().length).toBeGreaterThan(0);
      expect(chunks!.length).toBeGreaterThanOrEqual(1);
      expect(chunks![0]!.timestamp[0]).toBe(0);
      let last = 0;
      for (const c of chunks!) {
        const [start, end] = c.timestamp;
        expect(start).toBeGreaterThanOrEqual(last);
        expect(end).not.toBeNull();
        expect(end!).toBeGreaterThan(start);
        expect(end!).toBeLessThanOrEqual(30);
        last = end!;
      }
      expect(chunks!.map((c) => c.text).join('')).toBe(text);
    }
  });

  it('gives word timestamps from the cross attentions (return_timestamps: "word")', async () => {
    const { text, chunks } = await transcribe(SIGNALS.noise, { return_timestamps: 'word' });
    expect(chunks!.map((c) => c.text.trim())).toEqual(text.trim().split(/\s+/));
    let last = 0;
    for (const { timestamp: [start, end] } of chunks!) {
      expect(start).toBeGreaterThanOrEqual(last);
      expect(end!).toBeGreaterThanOrEqual(start);
      last = start;
    }
    // The alignment heads look at their word's frames: the words spread over the first second.
    expect(chunks!.at(-1)!.timestamp[0]).toBeGreaterThan(0.5);
    expect(chunks!.at(-1)!.timestamp[1]!).toBeLessThanOrEqual(2);
  });

  it('detects languages that depend on the audio (one step on <|startoftranscript|>, argmax over lang_to_id)', async () => {
    const langToId = readJson('generation_config.json').lang_to_id as Record<string, number>;
    const detected = new Set<string>();
    for (const audio of Object.values(SIGNALS)) {
      const features = (await asr.processor(audio)) as { input_features: unknown };
      const sot = new Tensor('int64', BigInt64Array.of(BigInt(tokenizer.convert_tokens_to_ids('<|startoftranscript|>') as number)), [1, 1]);
      const out = (await asr.model.forward({ input_features: features.input_features, decoder_input_ids: sot } as never)) as { logits: Tensor };
      const logits = out.logits.data as Float32Array;
      const [best] = Object.entries(langToId).sort((a, b) => logits[b[1]]! - logits[a[1]]!)[0]!;
      detected.add(best);
    }
    expect(detected.size).toBeGreaterThan(1);
  });

  it('runs the translate task', async () => {
    const { text } = await transcribe(SIGNALS.low, { task: 'translate' });
    expect(text.trim().split(/\s+/).length).toBeGreaterThanOrEqual(3);
  });
});
