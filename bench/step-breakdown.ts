// Where a decode step's time goes, from the server's /metrics: the step loop's
// phase sums (engine stats) read before and after a stretch of load, per step.

export interface LoopSample {
  ms: Record<string, number>;
  steps: number;
  rows: number;
}

/** The step-loop counters of one model in a /metrics text. */
export async function readLoop(baseUrl: string, model: string): Promise<LoopSample> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const sample: LoopSample = { ms: {}, steps: 0, rows: 0 };
  for (const line of text.split('\n')) {
    const m = /^(hearth_step_seconds_total|hearth_decode_steps_total|hearth_decode_rows_total)\{([^}]*)\} (\S+)$/.exec(line);
    if (!m || !m[2].includes(`model="${model}"`)) continue;
    const value = Number(m[3]);
    if (m[1] === 'hearth_decode_steps_total') sample.steps = value;
    else if (m[1] === 'hearth_decode_rows_total') sample.rows = value;
    else sample.ms[/phase="([^"]+)"/.exec(m[2])![1]] = value * 1000;
  }
  return sample;
}

/**
 * Milliseconds per decode step in each phase between two samples, and the step as the
 * client sees it (`client_step_ms`: the streams' median inter-token time); what the loop's
 * phases do not cover is the main thread's share (worker messages, HTTP, SSE) and waiting.
 */
export function perStep(before: LoopSample, after: LoopSample, clientStepMs: number) {
  const steps = after.steps - before.steps;
  const phases = Object.fromEntries(
    Object.keys(after.ms).map((p) => [p, Math.round(((after.ms[p] - (before.ms[p] ?? 0)) / steps) * 1000) / 1000]),
  );
  const loop = Object.values(phases).reduce((a, b) => a + b, 0);
  return {
    steps,
    mean_batch: Math.round(((after.rows - before.rows) / steps) * 100) / 100,
    phases_ms: phases,
    loop_ms: Math.round(loop * 1000) / 1000,
    client_step_ms: Math.round(clientStepMs * 1000) / 1000,
  };
}

/** The step loop's counters as engine.stats() gives them for one model. */
export interface EngineLoop {
  step_ms?: Record<string, number>;
  decode_steps?: number;
  decode_rows?: number;
}

/**
 * The host's share of a row: every phase of the loop but the graph's runs (`graph`, `prefill`)
 * and the prefix cache's copies (per request, not per row). `logits` is the sampling head's run
 * and the whole rows read: graph work on the CPU's provider, so it is given apart too.
 */
export const HOST_PHASES = ['feeds', 'logits', 'repack', 'mask', 'sample', 'emit', 'yield'] as const;

/**
 * Milliseconds per sampled row in each phase between two engine.stats() samples. Rows sampled
 * are the decode steps' rows and each request's first token (sampled from its prompt's logits),
 * so `requests` is how many requests finished in between.
 */
export function perRow(before: EngineLoop, after: EngineLoop, requests: number) {
  const steps = (after.decode_steps ?? 0) - (before.decode_steps ?? 0);
  const decodeRows = (after.decode_rows ?? 0) - (before.decode_rows ?? 0);
  const rows = decodeRows + requests;
  const ms = (p: string) => (after.step_ms?.[p] ?? 0) - (before.step_ms?.[p] ?? 0);
  const r4 = (x: number) => Math.round(x * 10_000) / 10_000;
  const phases = Object.fromEntries(Object.keys(after.step_ms ?? {}).map((p) => [p, r4(ms(p) / rows)]));
  const host = HOST_PHASES.reduce((a, p) => a + ms(p), 0);
  return {
    steps,
    rows,
    mean_batch: steps ? Math.round((decodeRows / steps) * 100) / 100 : 0,
    phases_ms_per_row: phases,
    /** feeds + logits + repack + mask + sample + emit + yield, per row. */
    host_ms_per_row: r4(host / rows),
    /** The same without `logits` (the head's run, graph work on the CPU). */
    host_ms_per_row_without_head: r4((host - ms('logits')) / rows),
  };
}
