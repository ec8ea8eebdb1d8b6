// Grammar trials (trial.ts) in Node: worker threads, each with its own XGrammar instance,
// each compiling one grammar at a time against a budget. A compile past the budget ends
// its worker (terminate() interrupts WASM too); a fresh one starts for the next grammar.
import { Worker } from 'node:worker_threads';
import type { GrammarSpec } from '../protocol.js';
import { workerFile, workerScript } from '../worker-script.js';
import { GRAMMAR_LIMITS } from './limits.js';
import type { VocabInfo } from './tokenizer-info.js';
import { TrialRefusal, type GrammarTrial } from './trial.js';
import type { TrialMessage, TrialReply } from './trial-runner.js';

export interface NodeTrialOptions {
  /** Milliseconds one compile may take (default GRAMMAR_LIMITS.compileMs). */
  budgetMs?: number;
  /** Workers, so that one slow grammar does not hold up the next (default 2). */
  workers?: number;
}

/** Taking a vocabulary in (once per worker and model) is not part of any grammar's budget. */
const VOCAB_MS = 120_000;

let nextId = 0;

type Settled = Exclude<TrialReply, { started: true }>;

/** A worker and the trials queued for it. */
class Lane {
  private worker?: Worker;
  private readonly keys = new Set<string>();
  private readonly pending = new Map<number, (r: TrialReply | TrialRefusal) => void>();
  private queue: Promise<unknown> = Promise.resolve();
  /** Trials queued or running here. */
  load = 0;

  constructor(private readonly budgetMs: number) {}

  run(spec: GrammarSpec, key: string, vocab: () => VocabInfo): Promise<void> {
    this.load++;
    const job = this.queue.then(() => this.attempt(spec, key, vocab)).finally(() => this.load--);
    this.queue = job.catch(() => undefined);
    return job;
  }

  async close(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    await w?.terminate();
  }

  private async attempt(spec: GrammarSpec, key: string, vocab: () => VocabInfo): Promise<void> {
    if (!this.keys.has(key)) {
      const r = await this.send({ kind: 'vocab', id: nextId++, key, vocab: vocab() }, VOCAB_MS).catch((e: Error) => ({ ok: false as const, reason: e.message }));
      // The trial itself could not be set up: not the grammar's fault, and the limits
      // already hold; the engine compiles it without a trial.
      if (!r.ok) return;
      this.keys.add(key);
    }
    const r = await this.send({ kind: 'compile', id: nextId++, key, spec }, this.budgetMs);
    if (!r.ok) throw new TrialRefusal(r.reason);
  }

  /** Sends `m`; `ms` counts from when the worker says the compile started (VOCAB_MS until then). */
  private send(m: TrialMessage, ms: number): Promise<Settled> {
    const worker = this.start();
    return new Promise<Settled>((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout>;
      const arm = (after: number, refusal: string) => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          this.pending.delete(m.id);
          void this.end(worker);
          reject(new TrialRefusal(refusal));
        }, after);
      };
      arm(m.kind === 'compile' ? VOCAB_MS : ms, 'XGrammar did not start compiling it in time');
      this.pending.set(m.id, (r) => {
        if (!(r instanceof TrialRefusal) && 'started' in r) return arm(ms, `compiling it took longer than ${ms} ms, the limit (simplify it)`);
        clearTimeout(timer);
        this.pending.delete(m.id);
        if (this.pending.size === 0) worker.unref();
        if (r instanceof TrialRefusal) reject(r);
        else resolve(r);
      });
      worker.ref();
      worker.postMessage(m);
    });
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const script = workerScript(workerFile('grammar', import.meta.url));
    const worker = new Worker(script.entry, { eval: script.eval });
    worker.unref();
    let why = 'it exited';
    worker.on('message', (r: TrialReply) => this.pending.get(r.id)?.(r));
    worker.on('error', (e) => (why = e instanceof Error ? e.message : String(e)));
    worker.once('exit', () => {
      if (this.worker === worker) this.end(worker);
      for (const settle of [...this.pending.values()]) settle(new TrialRefusal(`compiling it stopped XGrammar (${why})`));
    });
    this.worker = worker;
    return worker;
  }

  private end(worker: Worker): Promise<number> {
    if (this.worker === worker) {
      this.worker = undefined;
      this.keys.clear();
    }
    return worker.terminate();
  }
}

export function startNodeGrammarTrial(opts: NodeTrialOptions = {}): GrammarTrial {
  const budget = opts.budgetMs ?? GRAMMAR_LIMITS.compileMs;
  const lanes = Array.from({ length: Math.max(1, opts.workers ?? 2) }, () => new Lane(budget));
  return {
    run(spec, key, vocab) {
      // The least busy worker; a worker is started only when the ones before it are busy.
      const lane = lanes.reduce((best, l) => (l.load < best.load ? l : best));
      return lane.run(spec, key, vocab);
    },
    async close() {
      await Promise.all(lanes.map((l) => l.close()));
    },
  };
}
