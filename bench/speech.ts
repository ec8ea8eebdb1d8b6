// npm run bench:speech [-- --fixture NAME] [--seconds S] [--repeats N] [--out FILE]
// Speech to text (issue 46): real-time factor (audio seconds transcribed a second of wall time)
// of Hearth's engine in its worker thread (as `hearth serve` runs it, without HTTP) at 1 file and
// at 8 files sent at once, beside transformers.js's automatic-speech-recognition pipeline on the
// same folder and samples, one file after another. Greedy, English, no timestamps, 20 s files of
// different signals. Medians of the repeats; ratios within one run. `npm run bench` runs this as
// its speech section. Targets: Hearth at 1 file >= 1.0x transformers.js; at 8 files >= 3x it.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { env, pipeline } from '@huggingface/transformers';
import { FIXTURES_DIR, writeFixtures } from '../models/index.js';
import { startNodeEngine } from '../src/engine/client/node.js';
import type { CatalogEntry } from '../src/engine/protocol.js';
import { chirp, concat, noise, tone } from '../test/helpers/signals.js';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

export interface SpeechFigures {
  model: { fixture: string };
  settings: { seconds: number; repeats: number; files: number[] };
  hearth_rtf: Record<number, number>;
  transformers_js_rtf: number;
  hearth_vs_transformers_js: Record<number, number>;
  /** Tokens a window decoded (the same in both: greedy on the same graphs). */
  text_chars: number;
  targets: Record<string, boolean>;
}

/** File i: a different signal each, so a batch's rows do not end together. */
function signal(i: number, seconds: number): Float32Array {
  const parts = [chirp(seconds / 2, 150 + 40 * i, 2500 + 100 * i), i % 2 ? tone(seconds / 4, 300 + 60 * i) : noise(seconds / 4, i + 1), noise(seconds / 4, 100 + i, 0.1)];
  return concat(...parts);
}

export async function measureSpeech(opts: { fixture?: string; seconds?: number; repeats?: number; log?: (s: string) => void } = {}): Promise<SpeechFigures> {
  const fixture = opts.fixture ?? 'tiny-whisper';
  const seconds = opts.seconds ?? 20;
  const repeats = opts.repeats ?? 3;
  const log = opts.log ?? ((s: string) => console.log(`[speech] ${s}`));
  await writeFixtures({ ifMissing: true });
  const folder = join(FIXTURES_DIR, fixture);
  const files = Array.from({ length: 8 }, (_, i) => signal(i, seconds));

  // transformers.js: the pipeline, one file after another (its own sequential use).
  env.localModelPath = `${FIXTURES_DIR}/`;
  env.allowRemoteModels = false;
  const asr = await pipeline('automatic-speech-recognition', fixture, { device: 'cpu', dtype: 'fp32', local_files_only: true });
  const tjs: number[] = [];
  let refText = '';
  for (let r = 0; r < repeats; r++) {
    const t0 = performance.now();
    refText = ((await asr(files[0]!, { language: 'en', task: 'transcribe' })) as { text: string }).text;
    tjs.push(seconds / ((performance.now() - t0) / 1000));
  }
  await asr.dispose();
  log(`transformers.js: ${round(median(tjs))}x real time, one file at a time`);

  const engine = startNodeEngine({ device: 'cpu' });
  const entry: CatalogEntry = { id: `svc/${fixture}`, task: 'transcription', class: 'bench', context_length: 448, source: folder, price: { input_per_1m: 0, output_per_1m: 0, per_audio_second: 0 } };
  await engine.load([entry]);
  for (let i = 0; i < 1200 && (await engine.models())[0]!.status !== 'ready'; i++) await new Promise((r) => setTimeout(r, 50));
  let n = 0;
  const run = (samples: Float32Array) => engine.transcribe({ id: `b${n++}`, model: entry.id, audio: new Uint8Array(), samples: samples.slice(), task: 'transcribe', language: 'en', temperature: 0, timestamps: 'none' });
  const hearth: Record<number, number> = {};
  let text = '';
  try {
    for (const count of [1, 8]) {
      const rtf: number[] = [];
      for (let r = 0; r < repeats; r++) {
        const t0 = performance.now();
        const out = await Promise.all(files.slice(0, count).map(run));
        text = out[0]!.text;
        rtf.push((count * seconds) / ((performance.now() - t0) / 1000));
      }
      hearth[count] = round(median(rtf));
      log(`Hearth, ${count} file${count > 1 ? 's' : ''} at once: ${hearth[count]}x real time`);
    }
  } finally {
    await engine.terminate();
  }
  if (text !== refText.trim()) log(`warning: the texts differ (Hearth ${JSON.stringify(text.slice(0, 60))}, transformers.js ${JSON.stringify(refText.slice(0, 60))})`);
  const base = median(tjs);
  const vs = { 1: round(hearth[1]! / base), 8: round(hearth[8]! / base) };
  return {
    model: { fixture },
    settings: { seconds, repeats, files: [1, 8] },
    hearth_rtf: hearth,
    transformers_js_rtf: round(base),
    hearth_vs_transformers_js: vs,
    text_chars: text.length,
    targets: {
      'speech: 1 file >= 1.0x transformers.js (real-time factor)': vs[1] >= 1,
      'speech: 8 files at once >= 3x transformers.js one after another': vs[8] >= 3,
    },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { fixture: { type: 'string' }, seconds: { type: 'string' }, repeats: { type: 'string' }, out: { type: 'string' } } });
  const figures = await measureSpeech({ fixture: values.fixture, seconds: values.seconds ? Number(values.seconds) : undefined, repeats: values.repeats ? Number(values.repeats) : undefined });
  const out = values.out ?? join(import.meta.dirname, 'results-speech.json');
  writeFileSync(out, `${JSON.stringify({ date: new Date().toISOString(), ...figures }, null, 2)}\n`);
  console.log(JSON.stringify(figures, null, 2));
}
