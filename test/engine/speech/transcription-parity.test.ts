// The engine's Whisper decoding against transformers.js on the same fixture folder and samples
// (tiny-whisper, in onnx-community's export layout): greedy text, segments (return_timestamps:
// true), words (token times by cross-attention and DTW) and the translate task. transformers.js
// runs with max_new_tokens, which turns off its seek loop: Hearth decodes each window once.
import { join } from 'node:path';
import { AutoProcessor, AutoTokenizer, env, pipeline, Tensor as TjsTensor, WhisperForConditionalGeneration } from '@huggingface/transformers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeBackend } from '../../../src/backends/node.js';
import { createEngine } from '../../../src/engine/engine.js';
import type { EngineApi, TranscribeRequest } from '../../../src/engine/protocol.js';
import { fixtures } from '../../helpers/fixtures.js';
import { chirp, concat, noise, tone } from '../../helpers/signals.js';

const MODEL = 'svc/tiny-whisper';
let dir: string;
let engine: EngineApi;
let n = 0;

const transcribe = (samples: Float32Array, more: Partial<TranscribeRequest> = {}) =>
  engine.transcribe!({ id: `t${n++}`, model: MODEL, audio: new Uint8Array(), samples: samples.slice(), task: 'transcribe', language: 'en', temperature: 0, timestamps: 'none', ...more });

beforeAll(async () => {
  dir = await fixtures();
  env.localModelPath = `${dir}/`;
  env.allowRemoteModels = false;
  engine = createEngine(nodeBackend('cpu'));
  await engine.load([{ id: MODEL, task: 'transcription', class: 'tiny', context_length: 448, source: join(dir, 'tiny-whisper'), price: { input_per_1m: 0, output_per_1m: 0, per_audio_second: 0.0001 } }]);
  for (let i = 0; i < 600 && (await engine.models())[0]!.status === 'starting'; i++) await new Promise((r) => setTimeout(r, 50));
  expect((await engine.models())[0]).toMatchObject({ status: 'ready', task: 'transcription', input_modalities: ['audio'] });
}, 120_000);
afterAll(async () => {
  await engine?.dispose();
});

/** transformers.js's own processor, tokenizer and model on the fixture folder, for references the pipeline does not give. */
async function reference() {
  const processor = await AutoProcessor.from_pretrained('tiny-whisper', { local_files_only: true });
  const tokenizer = await AutoTokenizer.from_pretrained('tiny-whisper', { local_files_only: true });
  const model = await WhisperForConditionalGeneration.from_pretrained('tiny-whisper', { device: 'cpu', dtype: 'fp32', local_files_only: true });
  return { processor, tokenizer, model };
}

const signals = { tone: tone(2, 440), chirp: chirp(3, 200, 3000), noise: noise(1.5, 7), mixed: concat(tone(1, 880), noise(1, 3)) };

describe('transcription parity with transformers.js', () => {
  it("gives the pipeline's greedy text for each signal, and different signals give different texts", async () => {
    const asr = await pipeline('automatic-speech-recognition', 'tiny-whisper', { device: 'cpu', dtype: 'fp32', local_files_only: true });
    try {
      const texts: string[] = [];
      for (const samples of Object.values(signals)) {
        const ref = (await asr(samples, { language: 'en', task: 'transcribe', max_new_tokens: 440 })) as { text: string };
        const ours = await transcribe(samples);
        expect(ours.text).toBe(ref.text.trim());
        expect(ours.text.length).toBeGreaterThan(0);
        texts.push(ours.text);
      }
      expect(new Set(texts).size).toBe(texts.length);
    } finally {
      await asr.dispose();
    }
  });

  it("gives the pipeline's segments with return_timestamps: true", async () => {
    const asr = await pipeline('automatic-speech-recognition', 'tiny-whisper', { device: 'cpu', dtype: 'fp32', local_files_only: true });
    try {
      for (const samples of Object.values(signals)) {
        const ref = (await asr(samples, { language: 'en', task: 'transcribe', return_timestamps: true, max_new_tokens: 440 })) as { text: string; chunks: { text: string; timestamp: [number, number | null] }[] };
        const ours = await transcribe(samples, { timestamps: 'segment' });
        expect(ours.text).toBe(ref.text.trim());
        expect(ours.segments.map((s) => s.text.trim())).toEqual(ref.chunks.map((c) => c.text.trim()));
        expect(ours.segments.map((s) => s.start)).toEqual(ref.chunks.map((c) => c.timestamp[0]));
        // A segment the reply leaves open: transformers.js gives it no end; Hearth closes it at the window's end.
        ref.chunks.forEach((c, i) => expect(ours.segments[i]!.end).toBe(c.timestamp[1] ?? Math.round((samples.length / 16_000) * 100) / 100));
      }
    } finally {
      await asr.dispose();
    }
  });

  it("gives transformers.js's word times (cross-attention, DTW and its word grouping)", async () => {
    const { processor, tokenizer, model } = await reference();
    try {
      for (const samples of [signals.chirp, signals.mixed]) {
        const { input_features } = await processor(samples);
        // The pipeline crops the attention at the audio's mel frames; openai-whisper and Python's
        // transformers at half of them (encoder frames), as Hearth does: the reference is run so.
        const frames = Math.floor(Math.floor(samples.length / 160) / 2);
        const out = (await model.generate({ inputs: input_features, language: 'en', task: 'transcribe', return_timestamps: true, return_token_timestamps: true, num_frames: frames, max_new_tokens: 440 } as never)) as unknown as { sequences: TjsTensor; token_timestamps: TjsTensor };
        const sequence = (out.sequences.tolist()[0] as bigint[]).map(Number);
        const times = (out.token_timestamps.tolist()[0] as number[]).map((x) => Math.round(x * 100) / 100);
        const begin = (tokenizer as unknown as { timestamp_begin: number }).timestamp_begin;
        const from = Math.max(sequence.findIndex((t) => t >= begin), 0);
        const [, ref] = (tokenizer as unknown as { _decode_asr: (c: unknown[], o: unknown) => [string, { chunks: { text: string; timestamp: [number, number] }[] }] })._decode_asr(
          [{ tokens: sequence.slice(from), token_timestamps: times.slice(from), stride: [samples.length / 16_000, 0, 0] }],
          { return_timestamps: 'word', time_precision: 0.02, force_full_sequences: false },
        );
        const ours = await transcribe(samples, { timestamps: 'word' });
        expect(ours.words!.length).toBeGreaterThan(0);
        expect(ours.words).toEqual(ref.chunks.map((c) => ({ word: c.text, start: c.timestamp[0], end: c.timestamp[1] })));
      }
    } finally {
      await model.dispose();
    }
  });

  it("gives the pipeline's text for the translate task", async () => {
    const asr = await pipeline('automatic-speech-recognition', 'tiny-whisper', { device: 'cpu', dtype: 'fp32', local_files_only: true });
    try {
      const ref = (await asr(signals.chirp, { language: 'fr', task: 'translate', max_new_tokens: 440 })) as { text: string };
      const ours = await transcribe(signals.chirp, { task: 'translate', language: 'fr' });
      expect(ours).toMatchObject({ text: ref.text.trim(), task: 'translate', language: 'french' });
    } finally {
      await asr.dispose();
    }
  });

  it('detects the language as the argmax over the language tokens after <|startoftranscript|>', async () => {
    const { processor, tokenizer, model } = await reference();
    const generation = (model as unknown as { generation_config: { lang_to_id: Record<string, number>; decoder_start_token_id: number } }).generation_config;
    try {
      for (const samples of Object.values(signals)) {
        const { input_features } = await processor(samples);
        const decoder_input_ids = new TjsTensor('int64', BigInt64Array.of(BigInt(generation.decoder_start_token_id)), [1, 1]);
        const { logits } = (await model({ input_features, decoder_input_ids } as never)) as { logits: TjsTensor };
        const row = logits.data as Float32Array;
        const [best] = Object.entries(generation.lang_to_id).sort((a, b) => row[b[1]]! - row[a[1]]!)[0]!;
        const ours = await transcribe(samples, { language: undefined, timestamps: 'segment' });
        const name = (tokenizer as unknown as { decode(ids: number[]): string }).decode([generation.lang_to_id[best]!]);
        expect(name).toBe(best);
        const { languageName } = await import('../../../src/engine/speech/languages.js');
        expect(ours.language).toBe(languageName(best.slice(2, -2)));
      }
    } finally {
      await model.dispose();
    }
  });

  it("puts a prompt after <|startofprev|> as Whisper does, and it changes the reply's prefix", async () => {
    const { processor, tokenizer, model } = await reference();
    const t = tokenizer as unknown as { encode(s: string, o: object): number[]; decode(ids: number[], o: object): string; convert_tokens_to_ids?: unknown };
    const id = (s: string) => t.encode(s, { add_special_tokens: false })[0]!;
    try {
      const samples = signals.tone;
      const prompt = 'Rivers and stones.';
      const init = [id('<|startofprev|>'), ...t.encode(' ' + prompt, { add_special_tokens: false }), id('<|startoftranscript|>'), id('<|en|>'), id('<|transcribe|>'), id('<|notimestamps|>')];
      const { input_features } = await processor(samples);
      const out = (await model.generate({ inputs: input_features, decoder_input_ids: init, max_new_tokens: 440 } as never)) as unknown as TjsTensor;
      const reply = (out.tolist()[0] as bigint[]).map(Number).slice(init.length);
      const ref = t.decode(reply, { skip_special_tokens: true }).trim();
      const ours = await transcribe(samples, { prompt });
      expect(ours.text).toBe(ref);
      expect(ours.text).not.toBe((await transcribe(samples)).text);
    } finally {
      await model.dispose();
    }
  });
});
