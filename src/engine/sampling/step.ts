import type { StepLogits } from '../models/logits-head.js';
import type { Sequence } from '../sequence.js';
import type { StepTimings } from '../step-timings.js';
import { maskRows } from '../structured/index.js';
import { HEAD_CANDIDATES } from '../models/logits-head.js';
import type { RowLogits } from './sampler.js';

/** One sequence's row of a graph run's logits. */
export interface RowToSample {
  seq: Sequence;
  logits: StepLogits;
  index: number;
}

/** Sequence.advance as the scheduler times it. */
export type Advance = (seq: Sequence, row: RowLogits) => boolean | 'whole-row';

/**
 * Samples one token for each row of a step. Rows read their best candidates first (one head
 * run for each graph run's logits); those that need more (a grammar mask, penalties, a draw
 * past the candidates) then read their whole row, masked by their grammar. Returns the
 * sequences that finished.
 */
export async function sampleRows(rows: RowToSample[], timings: StepTimings, advance: Advance, wholeRows = false): Promise<Set<Sequence>> {
  const done = new Set<Sequence>();
  const whole: RowToSample[] = [];
  const byCandidates: RowToSample[] = [];
  for (const r of rows) (wholeRows || r.seq.wantsWholeRow(HEAD_CANDIDATES) ? whole : byCandidates).push(r);
  for (const [logits, rowsOfStep] of byStep(byCandidates)) {
    // Greedy rows that ask no logprobs need the best token alone: a reduction on the device, no sort.
    const bestOnly = rowsOfStep.filter((r) => r.seq.normaliserTemperature === null);
    const ranked = rowsOfStep.filter((r) => r.seq.normaliserTemperature !== null);
    for (const group of [bestOnly, ranked]) {
      if (group.length === 0) continue;
      const t0 = performance.now();
      const items = group.map((r) => r.index);
      const candidates = group === bestOnly ? await logits.best(items) : await logits.candidates(items, group.map((r) => r.seq.normaliserTemperature!));
      timings.lap('logits', t0);
      group.forEach((r, i) => {
        const outcome = advance(r.seq, { candidates: candidates[i] });
        if (outcome === 'whole-row') whole.push(r);
        else if (outcome) done.add(r.seq);
      });
    }
  }
  for (const [logits, group] of byStep(whole)) {
    const t0 = performance.now();
    const rowsOf = await logits.whole(group.map((r) => r.index));
    const t1 = timings.lap('logits', t0);
    await maskRows(group.map((r) => r.seq), rowsOf); // structured outputs: each row by its own grammar
    timings.lap('mask', t1);
    group.forEach((r, i) => {
      if (advance(r.seq, { whole: rowsOf[i] }) === true) done.add(r.seq);
    });
  }
  return done;
}

function byStep(rows: RowToSample[]): Map<StepLogits, RowToSample[]> {
  const groups = new Map<StepLogits, RowToSample[]>();
  for (const r of rows) {
    const group = groups.get(r.logits);
    if (group) group.push(r);
    else groups.set(r.logits, [r]);
  }
  return groups;
}
