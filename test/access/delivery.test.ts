// How often a stream's delivery is written to the store: at every 32 completion tokens,
// and at most a second after a token that is not written yet; one write in flight at a
// time, the latest figures next; nothing after the hold ends.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DeliveryRecorder } from '../../src/access/delivery.js';
import type { UsageRecord } from '../../src/access/types.js';

const at = (completion_tokens: number): UsageRecord => ({ model: 'svc/tiny-chat', prompt_tokens: 5, completion_tokens, cost_usd: completion_tokens * 1e-6 });

describe('DeliveryRecorder', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('writes at every 32 tokens, and a second after the last token not yet written', async () => {
    const written: number[] = [];
    const r = new DeliveryRecorder(async (u) => void written.push(u.completion_tokens));
    for (let t = 1; t <= 70; t++) {
      r.update(at(t));
      await vi.advanceTimersByTimeAsync(1); // 70 tokens in 70 ms
    }
    expect(written).toEqual([32, 64]);
    await vi.advanceTimersByTimeAsync(900);
    expect(written).toEqual([32, 64]);
    await vi.advanceTimersByTimeAsync(100);
    expect(written).toEqual([32, 64, 70]);
    // Slow tokens: each is written within a second of its arrival.
    r.update(at(71));
    await vi.advanceTimersByTimeAsync(1000);
    expect(written).toEqual([32, 64, 70, 71]);
  });

  it('keeps one write in flight and sends the latest figures after it', async () => {
    const started: number[] = [];
    const finish: (() => void)[] = [];
    const r = new DeliveryRecorder((u) => {
      started.push(u.completion_tokens);
      return new Promise<void>((resolve) => finish.push(resolve));
    });
    for (let t = 1; t <= 100; t++) r.update(at(t));
    expect(started).toEqual([32]);
    finish.shift()!();
    await vi.advanceTimersByTimeAsync(0);
    expect(started).toEqual([32, 100]);
  });

  it('retries a failed write with the next figures', async () => {
    const written: number[] = [];
    let fail = true;
    const r = new DeliveryRecorder(async (u) => {
      if (fail) throw new Error('store away');
      written.push(u.completion_tokens);
    });
    for (let t = 1; t <= 32; t++) r.update(at(t));
    await vi.advanceTimersByTimeAsync(0);
    fail = false;
    r.update(at(33)); // 33 tokens since the last write that landed (none)
    await vi.advanceTimersByTimeAsync(0);
    expect(written).toEqual([33]);
  });

  it('rewrites the latest figures on demand (a lease renewal), and writes nothing once stopped', async () => {
    const written: number[] = [];
    const r = new DeliveryRecorder(async (u) => void written.push(u.completion_tokens));
    r.rewrite();
    expect(r.started).toBe(false);
    for (let t = 1; t <= 40; t++) r.update(at(t));
    await vi.advanceTimersByTimeAsync(0);
    expect(written).toEqual([32, 40]); // 40 came in while 32 was being written
    r.rewrite();
    await vi.advanceTimersByTimeAsync(0);
    expect(written).toEqual([32, 40, 40]);
    r.update(at(41));
    r.stop();
    await vi.advanceTimersByTimeAsync(5000);
    r.rewrite();
    expect(written).toEqual([32, 40, 40]);
  });
});
