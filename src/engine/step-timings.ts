// Where the step loop's time goes, as running sums (performance.now, a few calls a
// step, nothing per token): cheap enough to stay on, read through engine.stats().

/** The loop's phases, each exclusive of the others. */
export const STEP_PHASES = [
  /** Prompt chunks run through the graph (and their KV read back). */
  'prefill',
  /** Decode input tensors built (ids, positions, mask, past KV wrapped). */
  'feeds',
  /** session.run of a decode step: the model itself, including its KV concat. */
  'graph',
  /** Logits turned into float32 rows. */
  'logits',
  /** Rows joining or leaving: KV unpacked and packed again, device caches read back. */
  'repack',
  /** Finished rows' KV copied into the prefix cache. */
  'prefix_cache',
  /** Structured outputs: grammar masks applied to the logits. */
  'mask',
  /** Sampling, stop strings and detokenizing (Sequence.advance without its emit). */
  'sample',
  /** Token events handed to the client (in the worker: the message post). */
  'emit',
  /** Between two turns of the loop: the event loop runs queued messages (new requests, cancels). */
  'yield',
] as const;

export type StepPhase = (typeof STEP_PHASES)[number];

export class StepTimings {
  readonly ms = Object.fromEntries(STEP_PHASES.map((p) => [p, 0])) as Record<StepPhase, number>;
  /** Decode steps run, and rows decoded over all of them (rows / steps = mean batch). */
  steps = 0;
  rows = 0;

  /** Adds the time since `since` to `phase`; returns now, to chain phases. */
  lap(phase: StepPhase, since: number): number {
    const now = performance.now();
    this.ms[phase] += now - since;
    return now;
  }
}
