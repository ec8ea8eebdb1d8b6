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
