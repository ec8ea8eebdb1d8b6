// The speech model's scheduler: windows of every waiting request go through the encoder in one
// batch and decode together. Whisper's merged decoder takes no attention mask, so rows that
// step together must have pasts of one length: a batch takes, first come first served, the
// windows whose prompts are as long as the first's (up to MAX_ROWS), and decodes them to the end;
// requests that arrive meanwhile wait for the next batch. A request's windows go in order, so
// its first window (the one its language is detected from) is always in its first batch.
import type { Tensor } from '../../backends/types.js';
import { EngineError } from '../errors.js';
import type { TranscribeRequest, TranscribeResult, TranscriptDelta } from '../protocol.js';
import { createRng, randomSeed } from '../sampling/rng.js';
import type { TextCodec } from '../text/codec.js';
import { decodeWindows, type WindowJob } from './decode-windows.js';
import { JoinedStream } from './joined-stream.js';
import { languageName } from './languages.js';
import { windowTranscript } from './window-transcript.js';
import type { AudioWindow } from './windows.js';
import type { WhisperConfig } from './whisper-config.js';
import type { WhisperGraphs } from './whisper-graphs.js';

/** Windows a batch of the encoder and the decoder takes at most (a 1 h file is 120 windows). */
export const MAX_ROWS = 8;
/** How long an idle batcher waits for requests sent together to arrive together. */
const GATHER_MS = 5;

export interface FeatureExtractor {
  (audio: Float32Array): Promise<{ input_features: { data: Float32Array; dims: number[] } }>;
  config: { hop_length: number };
}

/** A request in the queue: its audio, its windows, and what its decoded windows gave so far. */
export interface PendingTranscript {
  req: TranscribeRequest;
  samples: Float32Array;
  windows: AudioWindow[];
  /** `<|startofprev|>` and the prompt's tokens (empty without a prompt). */
  prefix: number[];
  /** The language code, asked or detected (undefined until its first window is decoded). */
  language?: string;
  stream: JoinedStream;
  resolve(r: TranscribeResult): void;
  reject(e: unknown): void;
}

interface Queued extends PendingTranscript {
  next: number;
  jobs: WindowJob[];
  done: number;
  cancelled: boolean;
  rng?: () => number;
}

export class SpeechBatcher {
  private readonly queue: Queued[] = [];
  private running = false;

  constructor(
    private readonly graphs: WhisperGraphs,
    private readonly config: WhisperConfig,
    private readonly codec: TextCodec,
    private readonly features: FeatureExtractor,
    private readonly sampleRate: number,
  ) {}

  submit(p: PendingTranscript): void {
    const rng = p.req.temperature > 0 ? createRng(p.req.seed ?? randomSeed()) : undefined;
    this.queue.push({ ...p, next: 0, jobs: [], done: 0, cancelled: false, rng });
    if (!this.running) void this.loop();
  }

  cancel(id: string): void {
    for (const q of this.queue) {
      if (q.req.id !== id || q.cancelled) continue;
      q.cancelled = true;
      // Not started yet: it leaves the queue now; otherwise when its batch ends.
      if (q.next === 0) this.fail(q, cancelled());
    }
  }

  private async loop(): Promise<void> {
    this.running = true;
    try {
      await new Promise((r) => setTimeout(r, GATHER_MS));
      for (let rows = this.takeRows(); rows.length > 0; rows = this.takeRows()) await this.runBatch(rows);
    } finally {
      this.running = false;
    }
  }

  /** The prompt a window of `q` starts from, which sets its past length. */
  private promptLength(q: Queued): number {
    return q.prefix.length + this.initTokens(q, 'en').length;
  }

  /** Up to MAX_ROWS windows, first come first served, whose prompts are as long as the first's. */
  private takeRows(): [Queued, number][] {
    const rows: [Queued, number][] = [];
    const head = this.queue.find((q) => q.next < q.windows.length);
    if (!head) return rows;
    const length = this.promptLength(head);
    for (const q of this.queue) {
      if (this.promptLength(q) !== length) continue;
      while (q.next < q.windows.length && rows.length < MAX_ROWS) rows.push([q, q.next++]);
      if (rows.length === MAX_ROWS) break;
    }
    return rows;
  }

  private async runBatch(rows: [Queued, number][]): Promise<void> {
    const owners = new Set(rows.map(([q]) => q));
    let states: Tensor | undefined;
    try {
      states = await this.encode(rows);
      await this.detectLanguages(rows, states);
      const jobs = rows.map(([q, w]) => this.job(q, w));
      const owner = new Map(jobs.map((j, i) => [j, rows[i]![0]]));
      await decodeWindows(this.graphs, this.config, jobs, states, {
        maxLength: this.config.maxTargetPositions,
        cancelled: (job) => owner.get(job)!.cancelled,
        onText: (job, text, lp) => owner.get(job)!.stream.push(job.index, text, lp),
        onDone: (job) => owner.get(job)!.stream.end(job.index),
        tokenText: (id) => this.codec.tokenText(id),
        tokenBytes: (id) => this.codec.tokenBytes(id),
      });
      jobs.forEach((job) => {
        const q = owner.get(job)!;
        q.jobs[job.index] = job;
        q.done++;
      });
    } catch (e) {
      for (const q of owners) this.fail(q, e);
      return;
    } finally {
      states?.dispose();
    }
    for (const q of owners) {
      if (q.cancelled) this.fail(q, cancelled());
      else if (q.done === q.windows.length) await this.finish(q).catch((e: unknown) => this.fail(q, e));
    }
  }

  /** The rows' features ([rows, mels, 3000]) through the encoder in one run. */
  private async encode(rows: [Queued, number][]): Promise<Tensor> {
    const feats = await Promise.all(rows.map(([q, w]) => this.features(q.samples.subarray(q.windows[w]!.start, q.windows[w]!.end))));
    const first = feats[0]!.input_features;
    const data = new Float32Array(rows.length * first.data.length);
    feats.forEach((f, i) => data.set(f.input_features.data, i * first.data.length));
    return this.graphs.encode(data, [rows.length, ...first.dims.slice(1)]);
  }

  /** One decoder step after `<|startoftranscript|>` for every request here without a language: the likeliest language token. */
  private async detectLanguages(rows: [Queued, number][], states: Tensor): Promise<void> {
    const asked = rows.flatMap(([q, w], i) => (q.language === undefined && w === 0 ? [i] : []));
    for (const [q] of rows) if (q.language === undefined && !this.config.multilingual) q.language = 'en';
    const pending = asked.filter((i) => rows[i]![0].language === undefined);
    if (pending.length === 0) return;
    const subset = this.graphs.selectStates(states, pending);
    const cache = this.graphs.emptyCache(pending.length);
    try {
      const step = await this.graphs.step(pending.map(() => [this.config.ids.sot]), subset, cache, false);
      pending.forEach((row, b) => {
        let best: [string, number] = ['<|en|>', -Infinity];
        for (const [token, id] of this.config.langToId) {
          const logit = step.logits[b * step.vocab + id]!;
          if (logit > best[1]) best = [token, logit];
        }
        rows[row]![0].language = best[0].slice(2, -2);
      });
    } finally {
      this.graphs.disposeCache(cache);
      subset.dispose();
    }
  }

  /** `<|startoftranscript|>` `<|lang|>` `<|task|>`, and `<|notimestamps|>` unless times are asked. */
  private initTokens(q: Queued, code: string): number[] {
    const { ids, langToId, multilingual } = this.config;
    const init = [ids.sot];
    if (multilingual) init.push(langToId.get(`<|${code}|>`)!, q.req.task === 'translate' ? ids.translate : ids.transcribe);
    if (q.req.timestamps === 'none') init.push(ids.noTimestamps);
    return init;
  }

  private job(q: Queued, w: number): WindowJob {
    const { start, end } = q.windows[w]!;
    return {
      index: w,
      prompt: [...q.prefix, ...this.initTokens(q, q.language ?? 'en')],
      sotIndex: q.prefix.length,
      start: start / this.sampleRate,
      seconds: (end - start) / this.sampleRate,
      // Encoder frames (20 ms) of audio: half the feature frames (10 ms) the window fills.
      frames: Math.floor(Math.floor((end - start) / this.features.config.hop_length) / 2),
      timestamps: q.req.timestamps !== 'none',
      words: q.req.timestamps === 'word',
      temperature: q.req.temperature,
      rng: q.rng,
    };
  }

  private async finish(q: Queued): Promise<void> {
    this.remove(q);
    const transcripts = await Promise.all(q.jobs.map((job) => windowTranscript(job, this.codec, this.config, q.req)));
    let id = 0;
    const result: TranscribeResult & { deltas: number } = {
      text: transcripts.map((t) => t.text).filter(Boolean).join(' '),
      language: languageName(q.language ?? 'en'),
      duration: q.samples.length / this.sampleRate,
      task: q.req.task,
      segments: transcripts.flatMap((t) => t.segments).map((s) => ({ id: id++, ...s })),
      ...(q.req.timestamps === 'word' ? { words: transcripts.flatMap((t) => t.words ?? []) } : {}),
      ...(q.req.logprobs ? { logprobs: q.jobs.flatMap((j) => j.logprobs ?? []) } : {}),
      // How many deltas were sent: the main side waits for them all before it hands over the result.
      deltas: q.stream.sent,
    };
    q.resolve(result);
  }

  private fail(q: Queued, e: unknown): void {
    this.remove(q);
    q.reject(e);
  }

  private remove(q: Queued): void {
    const i = this.queue.indexOf(q);
    if (i >= 0) this.queue.splice(i, 1);
  }
}

const cancelled = () => new EngineError('cancelled', 'the request was cancelled');

export type { TranscriptDelta };
