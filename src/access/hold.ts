// Holds on the spending cap (see Hold in types.ts) and the charges that must not be
// lost when the store is away. Runs in Node and in browsers.

import { DeliveryRecorder } from './delivery.js';
import { randomBase62 } from './keys.js';
import type { AccessStore, UsageEntry } from './store.js';
import { storeUnavailable, type Hold, type Principal, type SettleOptions, type UsageRecord } from './types.js';

export interface HoldDeps {
  store: AccessStore;
  now: () => number;
  /** How long a hold counts without renewal; renewed every third of it while held. */
  leaseMs: number;
  retries: Retries;
}

/** Store writes retried in the background until they land: a delivered reply's charge is
 * never dropped because the store was briefly away. Settling is idempotent per hold id,
 * so a write whose reply was lost (and that did land) is not charged twice. */
export class Retries {
  private readonly pending = new Map<string, () => Promise<void>>();
  private closed = false;

  add(id: string, op: () => Promise<void>, what: string): void {
    if (this.closed || this.pending.has(id)) return;
    this.pending.set(id, op);
    let delay = 250;
    const attempt = async () => {
      if (this.closed || !this.pending.has(id)) return;
      try {
        await op();
        this.pending.delete(id);
      } catch {
        delay = Math.min(delay * 2, 5000);
        unref(setTimeout(() => void attempt(), delay));
      }
    };
    console.error(`hearth: the access store cannot be reached; ${what} will be retried until it lands`);
    unref(setTimeout(() => void attempt(), delay));
  }

  get size(): number {
    return this.pending.size;
  }

  /** One last try of each; says what could not be written. */
  async close(): Promise<void> {
    this.closed = true;
    const left = [...this.pending.entries()];
    this.pending.clear();
    let lost = 0;
    for (const [, op] of left) await op().catch(() => lost++);
    if (lost) console.error(`hearth: ${lost} settlement(s) could not be written to the access store before exit`);
  }
}

export const newHoldId = () => `hold_${randomBase62(24)}`;

/** `held`: the store holds `amountUsd` under `id` (a sandbox account); otherwise the hold
 * only carries the charge to the ledger (and a stream's deliveries, once it has some). */
export function createHold(deps: HoldDeps, p: Principal, model: string, amountUsd: number, held: boolean, id = newHoldId()): Hold {
  const { store, now, leaseMs, retries } = deps;
  const ref = { id, account_id: p.accountId };
  const entryOf = (usage: UsageRecord) => usageEntry(p, { ...usage, model: usage.model || model }, now());
  let amount = amountUsd;
  let done = false;
  const deliveries = new DeliveryRecorder((u) => store.recordDelivery({ ...ref, entry: entryOf(u), expires: now() + leaseMs }));
  // The lease is renewed while the request runs: a long stream keeps its hold (and its
  // delivery), a server that died (or froze) stops renewing and its hold expires.
  let renewer: ReturnType<typeof setInterval> | undefined;
  const renewing = () => {
    if (renewer) return;
    renewer = setInterval(() => {
      if (held) void store.renewReservation(id, p.accountId, amount, now() + leaseMs).catch(() => {});
      deliveries.rewrite();
    }, leaseMs / 3);
    unref(renewer);
  };
  if (held) renewing();

  return {
    id,
    lower(maxCostUsd: number) {
      if (done || !held || !(maxCostUsd < amount)) return;
      amount = Math.max(0, maxCostUsd);
      void store.renewReservation(id, p.accountId, amount, now() + leaseMs).catch(() => {});
    },
    delivered(usage: UsageRecord) {
      if (done) return;
      deliveries.update(usage);
      renewing();
    },
    async settle(usage: UsageRecord | null, opts: SettleOptions = {}) {
      if (done) return;
      done = true;
      if (renewer) clearInterval(renewer);
      deliveries.stop();
      const e = usage ? entryOf(usage) : undefined;
      // A hold the store never saw has nothing to end there unless it charges.
      if (!e && !held && !deliveries.started) return;
      try {
        await store.settle(ref, e);
      } catch {
        if (opts.beforeReply && e) {
          // The answer is not sent, so it is not charged; free the hold when the store is back.
          retries.add(id, () => store.settle(ref), 'the release of a hold');
          throw storeUnavailable();
        }
        retries.add(id, () => store.settle(ref, e), e ? `a charge of ${e.cost_usd} USD` : 'the release of a hold');
      }
    },
  };
}

/** The ledger line of a charge; it carries the request id (an audit can spot a double charge). */
export function usageEntry(p: Principal, usage: UsageRecord, ts: number): UsageEntry {
  const requestId = usage.request_id ?? p.requestId;
  return {
    ts,
    account_id: p.accountId,
    key_id: p.keyId,
    model: usage.model,
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    cost_usd: usage.cost_usd,
    ...(requestId !== undefined ? { request_id: requestId } : {}),
  };
}

function unref(t: unknown): void {
  (t as { unref?: () => void }).unref?.();
}
