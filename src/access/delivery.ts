// How often a stream's delivery reaches the store: a crash loses at most the tokens since
// the last write, so writes come at least every TOKENS completion tokens and at most a
// second after a token that is not written yet; never more than one in flight (a
// networked store that is slow gets the latest figures next, not a queue of old ones).
// Runs in Node and in browsers.
import type { UsageRecord } from './types.js';

export const DELIVERY_EVERY_TOKENS = 32;
export const DELIVERY_EVERY_MS = 1000;

export class DeliveryRecorder {
  private latest: UsageRecord | undefined;
  private written: UsageRecord | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private inFlight = false;
  private again = false;
  private stopped = false;

  /** `write` persists one figure; a failed write is retried with the next one. */
  constructor(private readonly write: (u: UsageRecord) => Promise<void>) {}

  /** The delivery so far (cumulative). */
  update(u: UsageRecord): void {
    if (this.stopped) return;
    this.latest = u;
    if (u.completion_tokens - (this.written?.completion_tokens ?? 0) >= DELIVERY_EVERY_TOKENS) this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => this.flush(), DELIVERY_EVERY_MS);
      (this.timer as { unref?: () => void }).unref?.();
    }
  }

  /** Whether anything was delivered (and so may be written). */
  get started(): boolean {
    return this.latest !== undefined;
  }

  /** Writes the latest figure again (to renew its lease), if there is one. */
  rewrite(): void {
    if (this.latest) {
      this.written = undefined;
      this.flush();
    }
  }

  /** No more writes; one in flight still lands (before the settlement sent after it). */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.stopped || !this.latest || this.latest === this.written) return;
    if (this.inFlight) {
      this.again = true;
      return;
    }
    const u = this.latest;
    this.inFlight = true;
    this.write(u).then(
      () => (this.written = u),
      () => undefined,
    ).finally(() => {
      this.inFlight = false;
      if (this.again) {
        this.again = false;
        this.flush();
      }
    });
  }
}
