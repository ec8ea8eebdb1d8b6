import { EngineError } from './errors.js';
import type { CausalLM } from './models/causal-lm.js';
import type { Sequence } from './sequence.js';
import { yieldToEventLoop } from './yield.js';

/**
 * The step loop of one model. Each step advances one sequence by one forward pass
 * (its whole prompt first, then a token at a time), taking sequences in turn so
 * concurrent requests all make progress. Sequences join and leave between steps,
 * which is where batching several per step will slot in.
 */
export class Scheduler {
  private readonly active: Sequence[] = [];
  private next = 0;
  private running = false;

  constructor(private readonly lm: CausalLM) {}

  submit(seq: Sequence): Promise<void> {
    this.active.push(seq);
    if (!this.running) void this.loop();
    return seq.result.then(() => undefined);
  }

  cancel(id: string): boolean {
    const seq = this.active.find((s) => s.id === id);
    if (seq) seq.cancelled = true;
    return seq !== undefined;
  }

  get size(): number {
    return this.active.length;
  }

  /** Ends every sequence, e.g. when the model is being unloaded. */
  abortAll(error: EngineError): void {
    for (const seq of this.active.splice(0)) seq.fail(error);
  }

  private async loop(): Promise<void> {
    this.running = true;
    try {
      while (this.active.length > 0) {
        this.next %= this.active.length;
        const seq = this.active[this.next];
        if (seq.cancelled) {
          this.remove(seq);
          seq.fail(new EngineError('cancelled', 'the request was cancelled'));
          continue;
        }
        try {
          const { logits, kv } = await this.lm.forward(seq.nextInput(), seq.kv);
          seq.kv = kv;
          if (seq.advance(logits)) this.remove(seq);
          else this.next++;
        } catch (e) {
          this.remove(seq);
          seq.fail(e);
        }
        await yieldToEventLoop();
      }
    } finally {
      this.running = false;
    }
  }

  private remove(seq: Sequence): void {
    const i = this.active.indexOf(seq);
    if (i !== -1) this.active.splice(i, 1);
    if (i < this.next) this.next--;
  }
}
