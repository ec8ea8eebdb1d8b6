// The bench's per-row step breakdown (bench/step-breakdown.ts): what the real-vocabulary
// model's "host time per row" target is read from.
import { describe, expect, it } from 'vitest';
import { HOST_PHASES, perRow } from '../../bench/step-breakdown.js';

const sample = (ms: Record<string, number>, steps: number, rows: number) => ({ step_ms: ms, decode_steps: steps, decode_rows: rows });

describe('per-row step breakdown', () => {
  it('divides each phase by the rows sampled: decode rows plus each request\'s first token', () => {
    const before = sample({ graph: 100, prefill: 50, feeds: 1, logits: 2, sample: 3 }, 10, 40);
    const after = sample({ graph: 300, prefill: 70, feeds: 3, logits: 6, sample: 7 }, 20, 112);
    const r = perRow(before, after, 8);
    expect(r.rows).toBe(80); // 72 decode rows + 8 first tokens
    expect(r.steps).toBe(10);
    expect(r.mean_batch).toBe(7.2);
    expect(r.phases_ms_per_row.graph).toBe(2.5);
    expect(r.phases_ms_per_row.logits).toBe(0.05);
  });

  it('counts as host time every phase but the graph runs and the prefix cache, and gives it without the head run too', () => {
    const ms = { prefill: 1000, graph: 1000, prefix_cache: 1000, feeds: 1, logits: 2, repack: 3, mask: 4, sample: 5, emit: 6, yield: 7 };
    const r = perRow(sample({}, 0, 0), sample(ms, 10, 100), 0);
    expect([...HOST_PHASES].sort()).toEqual(['emit', 'feeds', 'logits', 'mask', 'repack', 'sample', 'yield']);
    expect(r.host_ms_per_row).toBe(0.28);
    expect(r.host_ms_per_row_without_head).toBe(0.26);
  });
});
