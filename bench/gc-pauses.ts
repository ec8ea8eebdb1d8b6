// V8's garbage-collection pauses on this thread, summed while a stretch of load runs. On the
// CPU they were most of a row's host time, started by the external memory onnxruntime-node
// allocates for every output of every run, until the engine began freeing those buffers itself
// (src/engine/models/host-buffers.ts, docs/performance.md). The graph alone still pays them. The
// bench gives them apart, for Hearth and for the graph alone, beside each row's host time.
import { PerformanceObserver, constants } from 'node:perf_hooks';

export interface GcPauses {
  /** Every pause's milliseconds, summed (scavenges, incremental steps, mark-compacts). */
  ms: number;
  count: number;
  /** Mark-compacts among them. */
  major: number;
}

/** Starts counting; `stop()` resolves to the pauses since (Node hands GC entries to observers a timer later: stop waits for it). */
export function countGcPauses(): { stop(): Promise<GcPauses> } {
  const sum: GcPauses = { ms: 0, count: 0, major: 0 };
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      sum.ms += e.duration;
      sum.count++;
      if ((e as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) sum.major++;
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  return {
    async stop() {
      await new Promise((resolve) => setTimeout(resolve, 20));
      observer.disconnect();
      return { ...sum, ms: Math.round(sum.ms * 1000) / 1000 };
    },
  };
}

/** Pauses a row sampled, and mark-compacts a hundred rows. */
export interface GcPerRow {
  ms_per_row: number;
  major_per_100_rows: number;
}

/**
 * GC pauses a row sampled. Not taken from host time: a pause falls in whatever phase was running,
 * often a graph run's (onnxruntime-node allocates its outputs there), so it is given beside it.
 */
export function gcPerRow(gc: GcPauses, rows: number): GcPerRow {
  const round = (x: number, d: number) => Math.round(x * 10 ** d) / 10 ** d;
  return { ms_per_row: round(gc.ms / rows, 4), major_per_100_rows: round((100 * gc.major) / rows, 2) };
}
