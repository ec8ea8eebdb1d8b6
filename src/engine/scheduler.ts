import { EngineError } from './errors.js';
import type { BatchKv, SeqKv } from './kv/layout.js';
import type { PrefixCache } from './kv/prefix-cache.js';
import { prefillGroups, type PrefillChunk } from './prefill-groups.js';
import type { CausalLM } from './models/causal-lm.js';
import type { Sequence } from './sequence.js';
import type { SpeculativeMode } from './spec/draft-policy.js';
import { StepCost } from './spec/step-cost.js';
import type { DraftModel } from './spec/draft-model.js';
import { StepTimings } from './step-timings.js';
import type { RowLogits } from './sampling/sampler.js';
import { sampleRows, type RowToSample } from './sampling/step.js';
import { HEAD_CANDIDATES } from './models/logits-head.js';
import { yieldToEventLoop } from './yield.js';

export interface SchedulerOptions {
  prefixCache?: PrefixCache;
  /** Most sequences decoded together in one step. */
  maxBatch?: number;
  /** Most prompt tokens prefilled between two decode steps (over all the sequences admitted in that turn). */
  prefillChunk?: number;
  /** Every row sampled from its whole row of logits (benchmarks' "before"), not from its candidates. */
  wholeRows?: boolean;
  /** Speculative decoding: drafts by prompt lookup, verified in one step, while one sequence runs (default off). */
  speculative?: SpeculativeMode;
  /** The draft model where `speculative` is 'draft' (without one, drafts come from prompt lookup). */
  drafter?: DraftModel;
}

export interface SchedulerStats {
  waiting: number;
  running: number;
  kvCacheBytes: number;
  kvCacheEntries: number;
  /** KV caches read back from the device (WebGPU), for any reason: never for a decode step, nor (repacked on the GPU) for a batch change. */
  kvDeviceReads: number;
  /** Those of them read to store a sequence in the prefix cache (which holds host arrays). */
  kvPrefixCacheReads: number;
  /** Where the loop's time went so far. */
  timings: StepTimings;
  /** Speculative decoding: tokens drafted, and those accepted. */
  specDrafted: number;
  specAccepted: number;
}

/**
 * The step loop of one model: continuous batching. Each turn of the loop
 * prefills up to `prefillChunk` prompt tokens of the waiting sequences (after any
 * prefix the cache holds), then runs one decode step for every running sequence
 * together, so a long prompt delays running streams by one chunk at a time. Several
 * short prompts are admitted in one turn, so a burst of requests joins the batch
 * together rather than one per step; a long prompt with more to go goes to the back
 * of the line, so a short request behind it is not held up for its whole prefill.
 * Sequences join and leave the batch between steps; a cancelled one is dropped
 * before the next.
 */
export class Scheduler {
  private waiting: Sequence[] = [];
  /** Prefilled, holding their own cache, to join the batch at the next step. */
  private joining: Sequence[] = [];
  /** The rows of `batchKv`, in order. */
  private batch: Sequence[] = [];
  private batchKv: BatchKv | null = null;
  private running = false;
  readonly maxBatch: number;
  readonly prefillChunk: number;
  /** Whether a lone sequence drafts: asked for, and the graph's positions do not depend on each other. */
  readonly speculates: boolean;
  /** Running sums of the loop's phases; the engine adds the time its token callbacks take ('emit'). */
  readonly timings = new StepTimings();
  private readonly spec = { drafted: 0, accepted: 0 };
  /** What a step of one row costs by its positions (speculation's drafts are as long as pays). */
  private readonly stepCost = new StepCost();

  constructor(
    private readonly lm: CausalLM,
    private readonly opts: SchedulerOptions = {},
  ) {
    this.maxBatch = opts.maxBatch ?? 32;
    this.prefillChunk = opts.prefillChunk ?? 256;
    this.speculates = (opts.speculative ?? 'off') !== 'off' && lm.io.positionsIndependent;
  }

  submit(seq: Sequence): void {
    this.waiting.push(seq);
    if (!this.running) void this.loop();
  }

  cancel(id: string): boolean {
    const seq = [...this.waiting, ...this.joining, ...this.batch].find((s) => s.id === id);
    if (seq) seq.cancelled = true;
    return seq !== undefined;
  }

  stats(): SchedulerStats {
    return {
      waiting: this.waiting.length,
      running: this.joining.length + this.batch.length,
      kvCacheBytes: this.opts.prefixCache?.bytes ?? 0,
      kvCacheEntries: this.opts.prefixCache?.entries ?? 0,
      kvDeviceReads: this.lm.reads.batch + this.lm.reads.prefixCache,
      kvPrefixCacheReads: this.lm.reads.prefixCache,
      timings: this.timings,
      specDrafted: this.spec.drafted,
      specAccepted: this.spec.accepted,
    };
  }

  /** Drops every prompt the prefix cache holds (an unload: their KV arrays are freed now). */
  clearPrefixCache(): void {
    this.opts.prefixCache?.clear();
  }

  /** Ends every sequence, e.g. when the model is being unloaded. */
  abortAll(error: EngineError): void {
    for (const seq of [...this.waiting.splice(0), ...this.joining.splice(0), ...this.batch.splice(0)]) {
      this.dropSeqKv(seq);
      seq.fail(error);
    }
    this.dropBatchKv();
  }

  private dropSeqKv(seq: Sequence): void {
    seq.images?.release();
    this.lm.release(seq.kv);
    seq.kv = null;
    this.opts.drafter?.forget(seq.id);
  }

  private dropBatchKv(): void {
    this.lm.release(this.batchKv);
    this.batchKv = null;
  }

  private async loop(): Promise<void> {
    this.running = true;
    try {
      while (this.waiting.length || this.joining.length || this.batch.length) {
        try {
          await this.dropCancelled();
        } catch (e) {
          this.failRunning(e);
        }
        await this.prefillTurn();
        if (this.joining.length || this.batch.length) {
          try {
            await this.decodeStep();
          } catch (e) {
            this.failRunning(e);
          }
        }
        const t = performance.now();
        await yieldToEventLoop();
        this.timings.lap('yield', t);
      }
    } finally {
      this.running = false;
    }
  }

  /**
   * Takes the next chunks of the waiting prompts, `prefillChunk` tokens in all, and runs
   * them in as few graph runs as padding allows (prefill-groups.ts).
   */
  private async prefillTurn(): Promise<void> {
    let budget = this.prefillChunk;
    const chunks: PrefillChunk<Sequence>[] = [];
    for (let turn = this.waiting.length; turn > 0 && budget > 0; turn--) {
      const seq = this.waiting.shift()!;
      const prompt = seq.promptIds;
      if (seq.prefilled === 0 && !seq.kv) {
        // At least the last prompt token is run, for the logits of the first new token.
        const hit = this.opts.prefixCache?.match(seq.cacheKey, prompt.length - 1) ?? null;
        seq.cachedTokens = seq.prefilled = hit?.length ?? 0;
        seq.kv = hit?.kv ?? null;
      }
      const tokens = Math.min(prompt.length, seq.prefilled + budget) - seq.prefilled;
      budget -= tokens;
      chunks.push({ item: seq, past: seq.prefilled, tokens });
    }
    for (const group of prefillGroups(chunks, this.maxBatch, (c) => this.lm.runsAlone(c))) {
      try {
        await this.prefill(group);
      } catch (e) {
        for (const { item } of group) {
          this.dropSeqKv(item);
          item.fail(e);
        }
      }
    }
  }

  /** Runs the next chunk of each sequence's prompt; one with more to go goes to the back of the line. */
  private async prefill(chunks: PrefillChunk<Sequence>[]): Promise<void> {
    const seqs = chunks.map((c) => c.item);
    const ends = chunks.map((c) => c.past + c.tokens);
    const t0 = performance.now();
    // A VLM prompt's image features go over its image tokens (encoded at the first chunk holding any).
    const inputs = [];
    for (const [i, seq] of seqs.entries()) {
      const splices = await seq.images?.splices(seq.prefilled, ends[i]);
      inputs.push({ tokens: seq.promptIds.slice(seq.prefilled, ends[i]), past: seq.kv, ...(splices?.length ? { splices } : {}), ...(seq.rope ? { rope: seq.rope } : {}) });
    }
    const results = await this.runPrefill(inputs);
    let t = this.timings.lap('prefill', t0);
    const done: RowToSample[] = [];
    for (const [i, seq] of seqs.entries()) {
      const result = results[i];
      if (!('kv' in result)) {
        this.dropSeqKv(seq);
        seq.fail(result.error);
        continue;
      }
      const kv = (seq.kv = result.kv);
      seq.prefilled = ends[i];
      if (seq.prefilled < seq.promptIds.length) {
        this.waiting.push(seq);
        continue;
      }
      seq.images?.release(); // its prompt is in the cache: the pixels and features are done with
      await this.remember(seq.cacheKey, () => this.lm.seqToHost(kv));
      done.push({ seq, logits: result.logits.step, index: result.logits.index });
    }
    this.timings.lap('prefix_cache', t);
    try {
      const finished = await sampleRows(done, this.timings, (seq, row) => this.advance(seq, row), this.opts.wholeRows);
      for (const { seq } of done) {
        if (finished.has(seq)) this.dropSeqKv(seq);
        else this.joining.push(seq);
      }
    } finally {
      for (const step of new Set(results.flatMap((r) => ('kv' in r ? [r.logits.step] : [])))) step.dispose();
    }
  }

  /** The graph run of a group; if it fails, each prompt alone, so that one prompt's failure fails only it. */
  private async runPrefill(inputs: Parameters<CausalLM['prefillMany']>[0]) {
    type Result = Awaited<ReturnType<CausalLM['prefillMany']>>[number] | { error: unknown };
    try {
      return (await this.lm.prefillMany(inputs)) as Result[];
    } catch (error) {
      if (inputs.length === 1) return [{ error }];
      const results: Result[] = [];
      for (const input of inputs) results.push(await this.lm.prefillMany([input]).then(([r]) => r, (e: unknown) => ({ error: e })));
      return results;
    }
  }

  private async decodeStep(): Promise<void> {
    if (this.joining.length && this.batch.length < this.maxBatch) {
      const joining = this.joining.splice(0, this.maxBatch - this.batch.length);
      await this.repack(this.batch, joining);
    }
    const alone = this.batch.length === 1 && this.speculates;
    const started = performance.now();
    if (alone) {
      const seq = this.batch[0]!;
      const draft = await this.draftFor(seq);
      if (draft.length) return this.verifyStep(seq, draft, started);
    }
    const ropes = this.batch.some((s) => s.rope) ? this.batch.map((s) => s.rope) : undefined;
    const { logits, kv } = await this.lm.decode(
      this.batch.map((s) => s.lastToken),
      this.batchKv!,
      this.timings,
      ropes,
    );
    this.batchKv = kv;
    this.timings.steps++;
    this.timings.rows += this.batch.length;
    let done: Set<Sequence>;
    try {
      done = await sampleRows(this.batch.map((seq, index) => ({ seq, logits, index })), this.timings, (seq, row) => this.advance(seq, row), this.opts.wholeRows);
    } finally {
      logits.dispose();
    }
    if (alone) this.stepCost.record(1, performance.now() - started);
    await this.leave(done);
  }

  /** The next draft of a lone sequence: from the draft model where one drafts, else by prompt lookup (empty: a plain step). */
  private async draftFor(seq: Sequence): Promise<number[]> {
    const drafter = this.opts.speculative === 'draft' ? this.opts.drafter : undefined;
    if (!drafter) return seq.drafts.next(seq.history, seq.draftRoom, this.stepCost);
    const length = seq.drafts.plan(seq.draftRoom, this.stepCost);
    return length ? drafter.propose(seq.id, seq.history, length) : [];
  }

  /**
   * A speculative step, for a batch of one: the sequence's last token and its draft in one graph
   * run, then its tokens sampled position by position exactly as plain steps would sample them,
   * for as long as each equals the draft. A drafted token is accepted when the sampled one equals
   * it: the same rule as drawing from the model's distribution and keeping a deterministic
   * draft with the probability the model gives it. So greedy output is token for token what it
   * is without speculation, a seeded draw uses the same random numbers, and grammars, penalties,
   * stop strings and logprobs see each token as in a plain step. The cache keeps the accepted
   * tokens only.
   */
  private async verifyStep(seq: Sequence, draft: number[], started: number): Promise<void> {
    const { logits, kv } = await this.lm.verify([seq.lastToken, ...draft], this.batchKv!, this.timings, seq.rope);
    this.batchKv = kv;
    this.timings.steps++;
    this.timings.rows++;
    // Position j's logits follow draft[j - 1]: they are read only while every draft token before it was sampled.
    let j = 0;
    let finished = false;
    const accepted = seq.drafts.accepted;
    seq.drafts.begin(draft);
    try {
      const temperature = seq.normaliserTemperature;
      if (temperature !== null && !this.opts.wholeRows && !seq.wantsWholeRow(HEAD_CANDIDATES)) {
        const t1 = performance.now();
        await logits.prefetch(draft.map((_, k) => k).concat(draft.length), temperature);
        this.timings.lap('logits', t1);
      }
      for (; ; j++) {
        finished = (await sampleRows([{ seq, logits, index: j }], this.timings, (s, row) => this.advance(s, row), this.opts.wholeRows)).has(seq);
        if (finished || j === draft.length || seq.lastToken !== draft[j]) break;
      }
    } finally {
      logits.dispose();
      seq.drafts.end();
    }
    this.spec.drafted += draft.length;
    this.spec.accepted += seq.drafts.accepted - accepted;
    // The cache keeps the last token and the drafts fed before position j: those whose logits were read.
    const t0 = performance.now();
    this.batchKv = null; // keepPrefix consumes the cache, also when it fails
    this.batchKv = await this.lm.keepPrefix(kv, kv.width - draft.length + j);
    this.timings.lap('repack', t0);
    this.stepCost.record(draft.length + 1, performance.now() - started);
    await this.leave(finished ? new Set([seq]) : new Set());
  }

  /** Finished sequences leave the batch, their caches stored in the prefix cache first. */
  private async leave(done: Set<Sequence>): Promise<void> {
    if (done.size === 0) return;
    const t1 = performance.now();
    const kv = this.batchKv!;
    for (const [r, s] of this.batch.entries()) {
      if (!done.has(s)) continue;
      await this.remember(s.fedKey, () => this.lm.rowToHost(kv, r));
      this.opts.drafter?.forget(s.id);
    }
    this.timings.lap('prefix_cache', t1);
    await this.repack(this.batch.filter((s) => !done.has(s)), []);
  }

  /** Sequence.advance, its time counted as 'sample' less what its token callback took ('emit'). */
  private advance(seq: Sequence, logits: RowLogits): boolean | 'whole-row' {
    const emitted = this.timings.ms.emit;
    const t0 = performance.now();
    const done = seq.advance(logits);
    this.timings.lap('sample', t0);
    this.timings.ms.sample -= this.timings.ms.emit - emitted;
    return done;
  }

  /**
   * Stores the KV of `tokens` in the prefix cache, unless it holds them already. The
   * prefix cache keeps host arrays (its entries outlive the batch, and a hit is fed as
   * an ordinary input), so on WebGPU storing one reads that sequence's cache back to the
   * CPU (counted apart from batch changes). Only what the cache lacks is read: with the
   * cache disabled, or a prompt and reply it already holds, nothing leaves the GPU.
   * Both inserts are kept on the GPU too: the prompt's serves requests that share it
   * while this one still decodes (a common system prompt), the end's serves the next turn.
   */
  private async remember(tokens: number[], kv: () => Promise<SeqKv>): Promise<void> {
    const cache = this.opts.prefixCache;
    if (!cache || cache.holds(tokens)) return;
    cache.insert(tokens, await kv());
  }

  /** Rebuilds the batch cache for the rows that stay plus those joining (on WebGPU: copied on the GPU, nothing read back). */
  private async repack(stay: Sequence[], joining: Sequence[]): Promise<void> {
    const t0 = performance.now();
    const keep = stay.map((s) => this.batch.indexOf(s));
    const kvs = joining.map((s) => s.kv!);
    for (const s of joining) s.kv = null;
    const old = this.batchKv;
    // The new rows before the copy: if it fails, failRunning fails them all (joining ones included).
    this.batch = [...stay, ...joining];
    this.batchKv = null; // lm.repack consumes the old cache, also when it fails
    this.batchKv = await this.lm.repack(old, keep, kvs);
    this.timings.lap('repack', t0);
  }

  /** A failed step (or repack) fails what it was running, not the loop. */
  private failRunning(e: unknown): void {
    for (const s of [...this.batch.splice(0), ...this.joining.splice(0)]) {
      this.dropSeqKv(s);
      s.fail(e);
    }
    this.dropBatchKv();
  }

  private async dropCancelled(): Promise<void> {
    const cancelled = (s: Sequence) => s.cancelled;
    const gone = [...this.waiting, ...this.joining, ...this.batch].filter(cancelled);
    if (gone.length === 0) return;
    for (const s of [...this.waiting, ...this.joining]) if (s.cancelled) this.dropSeqKv(s);
    this.waiting = this.waiting.filter((s) => !s.cancelled);
    this.joining = this.joining.filter((s) => !s.cancelled);
    for (const s of gone) {
      this.opts.drafter?.forget(s.id);
      s.fail(new EngineError('cancelled', 'the request was cancelled'));
    }
    if (this.batch.some(cancelled)) await this.repack(this.batch.filter((s) => !s.cancelled), []);
  }
}
