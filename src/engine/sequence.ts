import type { SeqCache } from './kv/layout.js';
import type {
  FinishReason,
  GenerateRequest,
  GenerateResult,
  TokenEvent,
  TokenLogprob,
} from './protocol.js';
import { EngineError } from './errors.js';
import { createRng, randomSeed } from './sampling/rng.js';
import { isGreedy, needsWholeRow, sampleToken, type RowLogits, type SampledToken } from './sampling/sampler.js';
import type { StreamDecoder, TextCodec } from './text/codec.js';
import { StopMatcher } from './text/stop-matcher.js';
import type { TokenConstraint } from './thinking/index.js';
import { DraftPolicy } from './spec/draft-policy.js';
import type { RopePositions } from './vision/mrope.js';
import type { PromptImages } from './vision/prompt-images.js';

export interface SequenceLimits {
  eosIds: readonly number[];
  contextLength: number;
}

/**
 * One generation in flight: its tokens, its KV cache, its sampler state and its
 * text so far. The scheduler advances it one step at a time; it decides when it
 * is done and what the client sees.
 */
export class Sequence {
  /** A VLM prompt's images, until its prompt is prefilled. */
  readonly images?: PromptImages;
  /** The prompt as the prefix cache keys it, where that is not its ids. */
  private readonly promptKey?: number[];
  /** A multimodal-position prompt's rotary positions (Qwen2-VL's), for every step it runs. */
  readonly rope?: RopePositions;
  readonly generated: number[] = [];
  /** Its cache while it is not in the decode batch (after prefill, before joining). */
  kv: SeqCache | null = null;
  /** Prompt tokens whose KV came from the prefix cache. */
  cachedTokens = 0;
  /** Prompt tokens whose KV is in `kv` so far (prefill runs in chunks). */
  prefilled = 0;
  cancelled = false;
  /** Its speculative drafts (prompt lookup): how long the next one is, and how many were accepted. */
  readonly drafts = new DraftPolicy();
  readonly result: Promise<GenerateResult>;

  private readonly counts = new Map<number, number>();
  private readonly rng: () => number;
  /** This step's uniform draw: taken once, so that a retry from the whole row draws the same. */
  private drawn: number | undefined;
  private readonly draw = () => (this.drawn ??= this.rng());
  private readonly stop: StopMatcher;
  private readonly decoder: StreamDecoder;
  private readonly logprobs: TokenLogprob[] = [];
  /** Finished or failed: its result is settled. */
  private settled = false;
  private settle!: { resolve: (r: GenerateResult) => void; reject: (e: unknown) => void };

  constructor(
    readonly req: GenerateRequest,
    readonly promptIds: number[],
    private readonly promptText: string,
    private readonly codec: TextCodec,
    private readonly limits: SequenceLimits,
    private readonly onToken: (ev: TokenEvent) => void,
    /** The grammar its output must follow (a reasoning model's: after its thinking); the scheduler masks its logits with it before advance(). */
    readonly constraint?: TokenConstraint,
    /** A VLM prompt's images (until its prompt is prefilled), the prompt as the prefix cache keys it (images stand for their pixels), and its rotary positions where they are multimodal. */
    vision?: { images?: PromptImages; cacheKey?: number[]; rope?: RopePositions },
  ) {
    this.images = vision?.images;
    this.promptKey = vision?.cacheKey;
    this.rope = vision?.rope;
    this.rng = createRng(req.sampling.seed ?? randomSeed());
    this.stop = new StopMatcher(req.sampling.stop);
    this.decoder = codec.streamDecoder();
    this.result = new Promise((resolve, reject) => (this.settle = { resolve, reject }));
  }

  get id(): string {
    return this.req.id;
  }

  get lastToken(): number {
    return this.generated[this.generated.length - 1];
  }

  /** Its prompt and its output so far: what prompt lookup drafts from. */
  get history(): number[] {
    return [...this.promptIds, ...this.generated];
  }

  /** How many tokens a draft may hold: it and the token after it stay within max_tokens and the context. */
  get draftRoom(): number {
    const made = this.generated.length;
    const left = Math.min((this.req.sampling.max_tokens ?? Infinity) - made, this.limits.contextLength - this.promptIds.length - made);
    return Math.max(0, left - 1);
  }

  /** Its prompt as the prefix cache keys it. */
  get cacheKey(): number[] {
    return this.promptKey ?? this.promptIds;
  }

  /** Every token fed so far, as the prefix cache keys them. */
  get fedKey(): number[] {
    return [...this.cacheKey, ...this.generated.slice(0, -1)];
  }

  /** Whether this step must be sampled from the whole row: a grammar masks it, penalties rewrite it, or more top logprobs are asked for than `candidates`. */
  wantsWholeRow(candidates: number): boolean {
    return this.constraint !== undefined || needsWholeRow(this.req.sampling, this.counts, candidates);
  }

  /** The temperature its candidates' normaliser is taken at (1 when greedy), or null when it needs none (greedy, no logprobs). */
  get normaliserTemperature(): number | null {
    const s = this.req.sampling;
    if (isGreedy(s)) return s.logprobs >= 0 ? 1 : null;
    return s.temperature;
  }

  /**
   * Samples from this step's logits. Returns true when the sequence has finished, false when
   * it goes on, and 'whole-row' when its candidates could not decide the draw: call again with
   * the whole row.
   */
  advance(logits: RowLogits): boolean | 'whole-row' {
    // Failed while in the batch (its grammar failed at this step's mask): nothing more is sampled or sent.
    if (this.settled) return true;
    const s = this.req.sampling;
    const token = sampleToken(logits, s, this.draw, this.counts);
    if (!token) return 'whole-row';
    this.drawn = undefined;
    if (!(token.id >= 0)) {
      // Every token was masked (a grammar and a constraint beside it that disagree): nothing can be drawn.
      this.fail(new EngineError('invalid_value', 'The grammar allows no further output here (nothing it accepts continues this text).'));
      return true;
    }
    this.generated.push(token.id);
    this.drafts.took(token.id);
    this.constraint?.accept(token.id);
    this.counts.set(token.id, (this.counts.get(token.id) ?? 0) + 1);
    const logprob = s.logprobs >= 0 ? this.describe(token) : undefined;
    if (logprob) this.logprobs.push(logprob);

    // A grammar's end is the output's end, ignore_eos or not: nothing it accepts may follow.
    if ((!s.ignore_eos || this.constraint) && this.limits.eosIds.includes(token.id)) return this.finish('stop', null, logprob);
    if (s.stop_token_ids.includes(token.id)) return this.finish('stop', token.id, logprob);

    const { emit, matched } = this.stop.push(this.decoder.push(token.id));
    if (matched !== null) return this.finish('stop', matched, logprob, emit);
    const total = this.promptIds.length + this.generated.length;
    if (this.generated.length >= (s.max_tokens ?? Infinity) || total >= this.limits.contextLength) {
      return this.finish('length', null, logprob, emit);
    }
    this.send(emit, [token.id], logprob);
    return false;
  }

  fail(error: unknown): void {
    this.settled = true;
    this.constraint?.dispose();
    this.settle.reject(error);
  }

  private finish(reason: FinishReason, matched: string | number | null, logprob?: TokenLogprob, emitted = ''): true {
    // A stop string already trimmed the text; otherwise what was held back is real.
    const tail = typeof matched === 'string' ? '' : this.stop.push(this.decoder.end()).emit + this.stop.flush();
    this.send(emitted + tail, [this.generated[this.generated.length - 1]], logprob);
    this.settled = true;
    this.constraint?.dispose();
    this.settle.resolve({
      text: this.stop.value,
      token_ids: [...this.generated],
      finish_reason: reason,
      matched_stop: matched,
      prompt_tokens: this.promptIds.length,
      completion_tokens: this.generated.length,
      cached_tokens: this.cachedTokens,
      spec_accepted_tokens: this.drafts.accepted,
      prompt_text: this.promptText,
      logprobs: this.req.sampling.logprobs >= 0 ? this.logprobs : undefined,
    });
    return true;
  }

  private send(text: string, ids: number[], logprob?: TokenLogprob): void {
    const ev: TokenEvent = { text, token_ids: ids, logprobs: logprob ? [logprob] : undefined };
    if (this.generated.length === 1) Object.assign(ev, { prompt_tokens: this.promptIds.length, cached_tokens: this.cachedTokens });
    this.onToken(ev);
  }

  private describe(token: SampledToken): TokenLogprob {
    const info = (id: number, logprob: number) => ({
      token: this.codec.tokenText(id),
      token_id: id,
      logprob,
      bytes: [...this.codec.tokenBytes(id)],
    });
    return { ...info(token.id, token.logprob), top: token.top.map((t) => info(t.id, t.logprob)) };
  }
}
