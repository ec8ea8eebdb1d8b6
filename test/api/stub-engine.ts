// A scripted EngineApi for the router's tests: the only fake engine in the
// project. It emits whole-word tokens ("Hello", " world", ...) with an optional
// pause between them, honours stop strings and cancel(), and records every call.
import { EngineError } from '../../src/engine/errors.js';
import { contentText } from '../../src/engine/text/content.js';
import type {
  CatalogEntry,
  CountRequest,
  EmbedRequest,
  EmbedResult,
  EngineApi,
  GenerateRequest,
  GenerateResult,
  ModelState,
  PromptInput,
  ScoreRequest,
  ScoreResult,
  TokenEvent,
  ThinkingStart,
  TokenLogprob,
  TranscribeRequest,
  TranscribeResult,
  TranscriptDelta,
  TranscriptSegment,
} from '../../src/engine/protocol.js';

export interface Script {
  tokens?: string[];
  /** Milliseconds to wait before each token. */
  delayMs?: number;
  /** Thrown before any token. */
  error?: unknown;
  /** Thrown after this many tokens. */
  failAfter?: number;
  finish?: 'stop' | 'length';
  promptTokens?: number;
  /** As a reasoning model reports its reply: where it started, and its thinking's tokens. */
  thinking?: ThinkingStart;
  reasoningTokens?: number;
}

export const DEFAULT_TOKENS = ['Hello', ' world', '!'];

/** What the stub's transcribe() answers: two fixed segments of a 4.25 s file, decoded a word a delta. */
export interface TranscribeScript {
  /** Thrown before any delta (a file the engine cannot decode). */
  error?: unknown;
  /** Thrown after this many deltas. */
  failAfter?: number;
  /** Milliseconds to wait before each delta. */
  delayMs?: number;
  duration?: number;
  language?: string;
}

export const STUB_SEGMENTS: TranscriptSegment[] = [
  { id: 0, seek: 0, start: 0, end: 2.5, text: ' Hello world.', tokens: [50364, 2425, 1002, 13, 50489], temperature: 0, avg_logprob: -0.25, compression_ratio: 1.1, no_speech_prob: 0.01 },
  { id: 1, seek: 0, start: 2.5, end: 4.2, text: ' How --> are you?', tokens: [50489, 1012, 366, 291, 30, 50574], temperature: 0, avg_logprob: -0.31, compression_ratio: 1.2, no_speech_prob: 0.02 },
];
export const STUB_DELTAS = [' Hello', ' world.', ' How', ' -->', ' are', ' you?'];
export const STUB_WORDS = STUB_DELTAS.map((word, i) => ({ word, start: i * 0.7, end: i * 0.7 + 0.6 }));
export const EMBED_DIMS = 1536;

export function stubModels(): ModelState[] {
  const base = { created: 1_700_000_000, owned_by: 'hearth', input_modalities: ['text' as const] };
  return [
    { ...base, id: 'svc/tiny-chat', task: 'chat', class: '7B', context_length: 2048, status: 'ready' },
    { ...base, id: 'svc/tiny-embed', task: 'embedding', class: '7B', context_length: 512, status: 'ready' },
    { ...base, id: 'svc/tiny-rerank', task: 'rerank', class: '7B', context_length: 512, status: 'ready' },
    { ...base, id: 'svc/warming', task: 'chat', class: '70B', context_length: 2048, status: 'starting' },
  ];
}

export function stubCatalog(): CatalogEntry[] {
  return stubModels().map((m) => ({
    id: m.id,
    task: m.task,
    class: m.class,
    context_length: m.context_length,
    source: `fixtures/${m.id.slice(4)}`,
    price: { input_per_1m: 0.1, output_per_1m: 0.4 },
  }));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function promptLength(p: PromptInput): number {
  if ('tokens' in p) return p.tokens.length;
  if ('text' in p) return p.text.split(/\s+/).filter(Boolean).length || 1;
  return p.messages.reduce((n, m) => n + contentText(m.content).split(/\s+/).filter(Boolean).length + 4, 0);
}

function promptText(req: GenerateRequest): string {
  const p = req.prompt;
  if ('text' in p) return p.text;
  if ('tokens' in p) return p.tokens.map((t) => `<${t}>`).join('');
  return p.messages.map((m) => `<|im_start|>${m.role}\n${m.content}<|im_end|>\n`).join('') + '<|im_start|>assistant\n';
}

function logprobFor(token: string, id: number, k: number): TokenLogprob {
  const bytes = [...new TextEncoder().encode(token)];
  const top = Array.from({ length: k }, (_, i) => ({
    token: i === 0 ? token : `alt${i}`,
    token_id: i === 0 ? id : 1000 + i,
    logprob: i === 0 ? -0.1 : -2 - i,
    bytes: i === 0 ? bytes : [...new TextEncoder().encode(`alt${i}`)],
  }));
  return { token, token_id: id, logprob: -0.1, bytes, top };
}

export class StubEngine implements EngineApi {
  modelStates: ModelState[] = stubModels();
  script: (req: GenerateRequest) => Script = () => ({});
  readonly calls: GenerateRequest[] = [];
  readonly embedCalls: EmbedRequest[] = [];
  readonly scoreCalls: ScoreRequest[] = [];
  transcribeScript: (req: TranscribeRequest) => TranscribeScript = () => ({});
  readonly transcribeCalls: TranscribeRequest[] = [];
  readonly cancelled: string[] = [];
  /** Generations that have returned or thrown, by id. */
  readonly finished = new Set<string>();
  #aborts = new Map<string, () => void>();

  async load(_entries: CatalogEntry[]): Promise<void> {}

  async models(): Promise<ModelState[]> {
    return this.modelStates.map((m) => ({ ...m }));
  }

  async generate(req: GenerateRequest, onToken: (ev: TokenEvent) => void): Promise<GenerateResult> {
    this.calls.push(req);
    try {
      return await this.#run(req, onToken);
    } finally {
      this.finished.add(req.id);
      this.#aborts.delete(req.id);
    }
  }

  async #run(req: GenerateRequest, onToken: (ev: TokenEvent) => void): Promise<GenerateResult> {
    const s = this.script(req);
    if (s.error !== undefined) throw s.error;
    let cancelled = false;
    let wake: () => void = () => {};
    this.#aborts.set(req.id, () => {
      cancelled = true;
      wake();
    });
    const tokens = s.tokens ?? DEFAULT_TOKENS;
    let text = '';
    const ids: number[] = [];
    const lps: TokenLogprob[] = [];
    let finish: 'stop' | 'length' = s.finish ?? 'stop';
    let matched: string | null = null;
    for (let i = 0; i < tokens.length; i++) {
      if (s.delayMs) await new Promise<void>((r) => ((wake = r), setTimeout(r, s.delayMs)));
      if (cancelled) throw new EngineError('cancelled', 'cancelled');
      if (s.failAfter !== undefined && i >= s.failAfter) throw new Error('tensor exploded at /secret/path/model.onnx');
      if (ids.length >= (req.sampling.max_tokens ?? Infinity)) {
        finish = 'length';
        break;
      }
      const tok = tokens[i]!;
      const candidate = text + tok;
      const hit = req.sampling.stop.map((st) => ({ st, at: candidate.indexOf(st) })).find((x) => x.at >= 0);
      if (hit) {
        const piece = candidate.slice(text.length, hit.at);
        ids.push(100 + i);
        if (piece) onToken({ text: piece, token_ids: [100 + i] });
        text = candidate.slice(0, hit.at);
        matched = hit.st;
        finish = 'stop';
        break;
      }
      ids.push(100 + i);
      const ev: TokenEvent = { text: tok, token_ids: [100 + i] };
      if (i === 0) ev.prompt_tokens = s.promptTokens ?? promptLength(req.prompt);
      if (i === 0 && s.thinking) ev.thinking = s.thinking;
      if (req.sampling.logprobs >= 0) {
        const lp = logprobFor(tok, 100 + i, req.sampling.logprobs);
        lps.push(lp);
        ev.logprobs = [lp];
      }
      text = candidate;
      onToken(ev);
    }
    const result: GenerateResult = {
      text,
      token_ids: ids,
      finish_reason: finish,
      matched_stop: matched,
      prompt_tokens: s.promptTokens ?? promptLength(req.prompt),
      completion_tokens: ids.length,
      cached_tokens: 0,
      prompt_text: promptText(req),
    };
    if (req.sampling.logprobs >= 0) result.logprobs = lps;
    if (s.thinking) Object.assign(result, { thinking: s.thinking, reasoning_tokens: s.reasoningTokens ?? 0 });
    return result;
  }

  /** The prompt lengths generate would report: what admission holds for. */
  readonly countCalls: CountRequest[] = [];
  async countTokens(req: CountRequest): Promise<number[]> {
    this.countCalls.push(req);
    return req.prompts.map(promptLength);
  }

  async cancel(id: string): Promise<void> {
    this.cancelled.push(id);
    this.#aborts.get(id)?.();
  }

  async embed(req: EmbedRequest): Promise<EmbedResult> {
    this.embedCalls.push(req);
    const data = req.input.map((inp, k) => {
      const v = new Float32Array(EMBED_DIMS);
      for (let i = 0; i < EMBED_DIMS; i++) v[i] = Math.sin(i * 0.37 + k + 1);
      let n = 0;
      for (const x of v) n += x * x;
      n = Math.sqrt(n);
      for (let i = 0; i < EMBED_DIMS; i++) v[i]! /= n;
      void inp;
      return v;
    });
    const prompt_tokens = req.input.reduce<number>((n, x) => n + (typeof x === 'string' ? x.split(/\s+/).filter(Boolean).length : x.length), 0);
    return { data, prompt_tokens };
  }

  /** A pair's score: the share of the first text's words the second has; its tokens: both texts' words. */
  async score(req: ScoreRequest): Promise<ScoreResult> {
    this.scoreCalls.push(req);
    const words = (t: string) => t.toLowerCase().split(/\W+/).filter(Boolean);
    const scores = req.pairs.map(([a, b]) => {
      const theirs = new Set(words(b));
      const ours = words(a);
      return ours.length ? ours.filter((w) => theirs.has(w)).length / ours.length : 0;
    });
    const prompt_tokens = req.pairs.reduce((n, [a, b]) => n + words(a).length + words(b).length, 0);
    return { scores, prompt_tokens };
  }

  /** Speech to text with a stub: the same fixed segments whatever the audio (an empty file is refused as the engine refuses it). */
  async transcribe(req: TranscribeRequest, onDelta?: (ev: TranscriptDelta) => void): Promise<TranscribeResult> {
    this.transcribeCalls.push(req);
    try {
      const s = this.transcribeScript(req);
      if (s.error !== undefined) throw s.error;
      if (req.audio.length === 0 && !req.samples) throw new EngineError('invalid_value', 'The file holds no audio.', 'file');
      const duration = s.duration ?? 4.25;
      if (req.max_seconds !== undefined && duration > req.max_seconds) {
        throw new EngineError('invalid_value', `The audio is ${duration} s long; this server takes at most ${req.max_seconds} s.`, 'file');
      }
      let cancelled = false;
      let wake: () => void = () => {};
      this.#aborts.set(req.id, () => {
        cancelled = true;
        wake();
      });
      const lp = (token: string) => ({ token, logprob: -0.2, bytes: [...new TextEncoder().encode(token)] });
      for (let i = 0; i < STUB_DELTAS.length; i++) {
        if (s.delayMs) await new Promise<void>((r) => ((wake = r), setTimeout(r, s.delayMs)));
        if (cancelled) throw new EngineError('cancelled', 'cancelled');
        if (s.failAfter !== undefined && i >= s.failAfter) throw new Error('decoder exploded at /secret/path/decoder.onnx');
        const delta = STUB_DELTAS[i]!;
        onDelta?.({ delta, ...(req.logprobs ? { logprobs: [lp(delta)] } : {}) });
      }
      return {
        text: STUB_DELTAS.join('').trim(),
        language: s.language ?? 'english',
        duration,
        task: req.task,
        segments: STUB_SEGMENTS.map((x) => ({ ...x })),
        ...(req.timestamps === 'word' ? { words: STUB_WORDS.map((w) => ({ ...w })) } : {}),
        ...(req.logprobs ? { logprobs: STUB_DELTAS.map(lp) } : {}),
      };
    } finally {
      this.finished.add(req.id);
      this.#aborts.delete(req.id);
    }
  }

  async dispose(): Promise<void> {}
}
