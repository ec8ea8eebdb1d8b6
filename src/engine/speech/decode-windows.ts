// Decodes a batch of windows together: one decoder run a step for every window still going,
// all rows of one past length (the batcher groups windows whose prompts are as long), the rules
// masked into each row's logits, a token picked per row, rows that end (or whose request was
// cancelled) leaving the batch. What a window produced is written into its job.
import type { Tensor } from '../../backends/types.js';
import type { TranscriptLogprob } from '../protocol.js';
import { applyWhisperRules } from './logits-rules.js';
import type { WhisperConfig } from './whisper-config.js';
import type { DecoderStep, WhisperGraphs } from './whisper-graphs.js';

export interface WindowJob {
  /** The window's place in its request (its text's place in the transcript). */
  index: number;
  /** `<|startofprev|>` and the prompt's tokens, then `<|startoftranscript|>`, language, task, `<|notimestamps|>`. */
  prompt: number[];
  /** Where `<|startoftranscript|>` is in the prompt (its logits give no_speech_prob). */
  sotIndex: number;
  /** Seconds from the file's start, and the window's length. */
  start: number;
  seconds: number;
  /** Encoder frames that hold audio (20 ms each): the cross-attention is cropped to them. */
  frames: number;
  /** Timestamp tokens (segments) asked; `words`: the cross-attention kept too. */
  timestamps: boolean;
  words: boolean;
  /** 0: greedy; else sampled with `rng`. */
  temperature: number;
  rng?: () => number;
  // Filled in by decodeWindows:
  sampled?: number[];
  /** The log-probability of each sampled token (from the masked logits it was picked from). */
  tokenLogprobs?: number[];
  logprobs?: TranscriptLogprob[];
  noSpeechProb?: number;
  /** Per alignment head, per fed position: its attention over the audio's frames. */
  weights?: Float32Array[][];
}

export interface DecodeHooks {
  /** Most tokens a window's prompt and reply may have together. */
  maxLength: number;
  /** A job whose request was cancelled leaves the batch at the next step. */
  cancelled(job: WindowJob): boolean;
  onText(job: WindowJob, text: string, logprob?: TranscriptLogprob): void;
  onDone(job: WindowJob): void;
  tokenText(id: number): string;
  tokenBytes(id: number): Uint8Array;
}

export async function decodeWindows(graphs: WhisperGraphs, config: WhisperConfig, jobs: WindowJob[], states: Tensor, hooks: DecodeHooks): Promise<void> {
  const heads = config.alignmentHeads ?? [];
  const withAttention = jobs.some((j) => j.words);
  const utf8 = jobs.map(() => new TextDecoder('utf-8'));
  for (const job of jobs) {
    job.sampled = [];
    job.tokenLogprobs = [];
    job.logprobs = [];
    if (job.words) job.weights = heads.map(() => []);
  }
  let active = jobs.map((_, i) => i);
  let cache = graphs.emptyCache(jobs.length);
  let rowStates = states;
  let feed = jobs.map((j) => j.prompt);
  /** Keeps the batch's rows at `rows` (indices into `active`). */
  const keepRows = (rows: number[]) => {
    cache = graphs.selectRows(cache, rows);
    const next = graphs.selectStates(rowStates, rows);
    if (rowStates !== states) rowStates.dispose();
    rowStates = next;
    feed = rows.map((b) => feed[b]!);
    active = rows.map((b) => active[b]!);
  };
  let first = true;
  try {
    while (active.length > 0) {
      const live = active.flatMap((j, b) => (hooks.cancelled(jobs[j]!) ? [] : [b]));
      if (live.length === 0) break;
      if (live.length < active.length) keepRows(live);
      const step = await graphs.step(feed, rowStates, cache, withAttention);
      const still: number[] = [];
      active.forEach((jobIndex, b) => {
        const job = jobs[jobIndex]!;
        const token = pick(step, b, job, config, first);
        if (token < config.ids.eos) {
          const bytes = hooks.tokenBytes(token);
          const text = utf8[jobIndex]!.decode(bytes, { stream: true });
          const lp = { token: hooks.tokenText(token), logprob: job.tokenLogprobs!.at(-1)!, bytes: Array.from(bytes) };
          job.logprobs!.push(lp);
          hooks.onText(job, text, lp);
        }
        if (token === config.ids.eos || job.prompt.length + job.sampled!.length >= hooks.maxLength) {
          const rest = utf8[jobIndex]!.decode();
          if (rest) hooks.onText(job, rest);
          hooks.onDone(job);
        } else still.push(b);
      });
      first = false;
      if (still.length === 0) break;
      if (still.length < active.length) keepRows(still);
      feed = active.map((j) => [jobs[j]!.sampled!.at(-1)!]);
    }
  } finally {
    graphs.disposeCache(cache);
    if (rowStates !== states) rowStates.dispose();
  }
}

/** The row's next token from the step's last position, with Whisper's rules applied; records it in the job. */
function pick(step: DecoderStep, b: number, job: WindowJob, config: WhisperConfig, first: boolean): number {
  const { positions, vocab } = step;
  if (first) job.noSpeechProb = noSpeechProb(step.logits, (b * positions + job.sotIndex) * vocab, vocab, config.ids.noSpeech);
  if (step.crossAttentions && job.weights) keepAttention(step, b, config.alignmentHeads ?? [], job);
  const row = step.logits.slice((b * positions + positions - 1) * vocab, (b * positions + positions) * vocab);
  applyWhisperRules(row, job.sampled!, config, { timestamps: job.timestamps });
  const token = job.rng && job.temperature > 0 ? sample(row, job.temperature, job.rng) : argmax(row);
  job.sampled!.push(token);
  job.tokenLogprobs!.push(logSoftmaxAt(row, token));
  return token;
}

/** Each alignment head's attention at the positions this step fed, cropped to the audio's frames. */
function keepAttention(step: DecoderStep, b: number, heads: [number, number][], job: WindowJob): void {
  const { positions } = step;
  const h = step.heads!;
  const frames = step.frames!;
  const keep = Math.min(frames, Math.max(1, job.frames));
  heads.forEach(([layer, head], k) => {
    const data = step.crossAttentions![layer];
    if (!data) return;
    for (let p = 0; p < positions; p++) {
      const off = ((b * h + head) * positions + p) * frames;
      job.weights![k]!.push(data.slice(off, off + keep));
    }
  });
}

function noSpeechProb(logits: Float32Array, offset: number, vocab: number, id: number | undefined): number {
  if (id === undefined) return 0;
  let max = -Infinity;
  for (let i = 0; i < vocab; i++) max = Math.max(max, logits[offset + i]!);
  let sum = 0;
  for (let i = 0; i < vocab; i++) sum += Math.exp(logits[offset + i]! - max);
  return Math.exp(logits[offset + id]! - max) / sum;
}

function argmax(row: Float32Array): number {
  let best = 0;
  for (let i = 1; i < row.length; i++) if (row[i]! > row[best]!) best = i;
  return best;
}

function logSoftmaxAt(row: Float32Array, token: number): number {
  let max = -Infinity;
  for (let i = 0; i < row.length; i++) if (row[i]! > max) max = row[i]!;
  let sum = 0;
  for (let i = 0; i < row.length; i++) sum += Math.exp(row[i]! - max);
  return row[token]! - max - Math.log(sum);
}

function sample(row: Float32Array, temperature: number, rng: () => number): number {
  let max = -Infinity;
  for (let i = 0; i < row.length; i++) if (row[i]! > max) max = row[i]!;
  const weights = new Float64Array(row.length);
  let sum = 0;
  for (let i = 0; i < row.length; i++) sum += weights[i] = Math.exp((row[i]! - max) / temperature);
  let r = rng() * sum;
  for (let i = 0; i < row.length; i++) {
    r -= weights[i]!;
    if (r <= 0 && weights[i]! > 0) return i;
  }
  return argmax(row);
}
