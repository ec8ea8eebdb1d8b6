// One request can mean several engine generations (n > 1, several prompts).
// They run concurrently so the engine can batch them; their token callbacks are
// merged into one channel that the responders read, and they are cancelled
// together when the client goes away.
import { isEngineError, type EngineError } from '../engine/errors.js';
import type { EngineApi, GenerateResult, KeepAlive, PromptInput, SamplingParams, TokenEvent } from '../engine/protocol.js';
import { Channel } from './channel.js';
import { randomId } from './ids.js';

export type GenEvent =
  | { kind: 'token'; gen: number; ev: TokenEvent }
  | { kind: 'done'; gen: number; result: GenerateResult }
  | { kind: 'error'; gen: number; error: unknown };

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
}

export function isCancelled(err: unknown): boolean {
  return isEngineError(err) && (err as EngineError).code === 'cancelled';
}

export class GenerationSet {
  readonly ids: string[];
  readonly events = new Channel<GenEvent>();
  /** Completion tokens seen so far per generation (what a cut stream is billed for). */
  readonly produced: number[];
  /** Prompt and cached tokens per generation, known from its first token event. */
  readonly promptSeen: { prompt_tokens: number; cached_tokens: number }[];
  readonly results: (GenerateResult | undefined)[];
  readonly startedAt = Date.now();
  /** Told each prompt's token count as the engine reports it (with its first token). */
  onPromptTokens?: (prompt: number, tokens: number) => void;
  /** Completion tokens a responder has taken from `sent()` per generation (what its events say, and a crash record carries). */
  readonly delivered: number[];
  #settled: boolean[];
  #pending: number;
  #cancelled = false;
  #unlisten: () => void = () => {};

  /** Generation g belongs to prompt floor(g / n); sample index g % n. */
  constructor(
    private readonly engine: EngineApi,
    readonly model: string,
    readonly prompts: PromptInput[],
    readonly n: number,
    private readonly sampling: SamplingParams,
    signal?: AbortSignal,
    /** How long the model stays loaded after these generations (the request's keep_alive). */
    private readonly keepAlive: KeepAlive = {},
  ) {
    const count = prompts.length * n;
    this.ids = Array.from({ length: count }, () => randomId('gen_'));
    this.produced = new Array<number>(count).fill(0);
    this.delivered = new Array<number>(count).fill(0);
    this.promptSeen = Array.from({ length: count }, () => ({ prompt_tokens: 0, cached_tokens: 0 }));
    this.results = new Array<GenerateResult | undefined>(count).fill(undefined);
    this.#settled = new Array<boolean>(count).fill(false);
    this.#pending = count;
    if (signal) {
      const onAbort = () => this.cancel();
      if (signal.aborted) this.#cancelled = true;
      else {
        signal.addEventListener('abort', onAbort, { once: true });
        this.#unlisten = () => signal.removeEventListener('abort', onAbort);
      }
    }
    this.#start();
  }

  get count(): number {
    return this.ids.length;
  }

  get cancelled(): boolean {
    return this.#cancelled;
  }

  promptOf(g: number): number {
    return Math.floor(g / this.n);
  }

  #start(): void {
    this.ids.forEach((id, g) => {
      const sampling: SamplingParams = { ...this.sampling, stop: [...this.sampling.stop], stop_token_ids: [...this.sampling.stop_token_ids] };
      // Same seed for every choice would give n identical answers.
      if (sampling.seed !== undefined) sampling.seed = sampling.seed + (g % this.n);
      const prompt = this.prompts[this.promptOf(g)]!;
      const onToken = (ev: TokenEvent) => {
        if (this.#settled[g]) return;
        this.produced[g]! += ev.token_ids.length;
        if (ev.prompt_tokens !== undefined) {
          this.promptSeen[g] = { prompt_tokens: ev.prompt_tokens, cached_tokens: ev.cached_tokens ?? 0 };
          this.onPromptTokens?.(this.promptOf(g), ev.prompt_tokens);
        }
        this.events.push({ kind: 'token', gen: g, ev });
      };
      const run = this.#cancelled
        ? Promise.reject(cancelledError())
        : Promise.resolve().then(() => this.engine.generate({ id, model: this.model, prompt, sampling, ...this.keepAlive }, onToken));
      run.then(
        (result) => {
          this.results[g] = result;
          this.#settle(g, { kind: 'done', gen: g, result });
        },
        (error: unknown) => {
          this.#settle(g, { kind: 'error', gen: g, error });
          // One failure fails the request: stop the siblings rather than let them run on.
          if (!isCancelled(error)) this.cancel();
        },
      );
    });
  }

  #settle(g: number, ev: GenEvent): void {
    if (this.#settled[g]) return;
    this.#settled[g] = true;
    this.events.push(ev);
    if (--this.#pending === 0) {
      this.#unlisten();
      this.events.close();
    }
  }

  /**
   * Waits for the first sign of life before a stream sends its headers, so an early
   * failure (context too long, model gone) gets its proper status instead of a 200
   * with an error event.
   */
  async started(): Promise<void> {
    const first = await this.events.peek();
    if (first?.kind === 'error') {
      this.cancel();
      throw first.error;
    }
  }

  /** Stops every unfinished generation (idempotent). */
  cancel(): void {
    if (this.#cancelled) return;
    this.#cancelled = true;
    this.ids.forEach((id, g) => {
      if (!this.#settled[g]) void Promise.resolve().then(() => this.engine.cancel(id)).catch(() => {});
    });
  }

  /**
   * The events as a streaming responder sends them: a token event counts as delivered when it is
   * handed over, so the event built from it can say so, and a crash record (SseProgress: read as
   * that event is queued, kept once the transport takes it) never counts tokens still queued here.
   */
  async *sent(): AsyncGenerator<GenEvent> {
    for await (const e of this.events) {
      if (e.kind === 'token') this.delivered[e.gen]! += e.ev.token_ids.length;
      yield e;
    }
  }

  /** usage() with the completion tokens a streaming responder has taken (sent()). */
  deliveredUsage(): Usage {
    return { ...this.usage(), completion_tokens: this.delivered.reduce((a, b) => a + b, 0) };
  }

  /** Waits for every generation; throws the first failure. */
  async all(): Promise<GenerateResult[]> {
    for await (const e of this.events) {
      if (e.kind === 'error') throw e.error;
    }
    return this.results as GenerateResult[];
  }

  /** Prompt tokens counted once per prompt; completion tokens summed over every generation. */
  usage(): Usage {
    let prompt_tokens = 0;
    let cached_tokens = 0;
    let completion_tokens = 0;
    for (let p = 0; p < this.prompts.length; p++) {
      const gens = [...Array(this.n).keys()].map((j) => p * this.n + j);
      const r = gens.map((g) => this.results[g] ?? this.promptSeen[g]!).find((x) => x.prompt_tokens > 0);
      prompt_tokens += r?.prompt_tokens ?? 0;
      cached_tokens += r?.cached_tokens ?? 0;
    }
    this.results.forEach((r, g) => (completion_tokens += r?.completion_tokens ?? this.produced[g]!));
    return { prompt_tokens, completion_tokens, cached_tokens };
  }
}

function cancelledError() {
  return { name: 'EngineError', code: 'cancelled', message: 'The request was cancelled.', param: null };
}
