// What a step of one row costs for each number of positions it runs, measured on this model and
// device as steps go by: t(n) ≈ a + b·n, fitted by least squares over recent steps (plain decode
// steps are n = 1, verify steps n = 1 + their draft). On a GPU, or a CPU bound by reading
// weights, b is small and long drafts pay; on a CPU running a 151,936-token lm_head, each extra
// position costs most of a step, and only drafts that are mostly accepted pay.

/** How much older steps count next to the latest: their weight falls by this factor each step. */
const DECAY = 0.9;

export class StepCost {
  // Decayed sums for the fit.
  private w = 0;
  private n = 0;
  private t = 0;
  private nn = 0;
  private nt = 0;

  /** A step of one row that ran `positions` positions in `ms`. */
  record(positions: number, ms: number): void {
    this.w = this.w * DECAY + 1;
    this.n = this.n * DECAY + positions;
    this.t = this.t * DECAY + ms;
    this.nn = this.nn * DECAY + positions * positions;
    this.nt = this.nt * DECAY + positions * ms;
  }

  /** The fit [a, b], or null until steps of at least two sizes were seen. */
  fit(): [number, number] | null {
    const { w, n, t, nn, nt } = this;
    const spread = w * nn - n * n;
    if (w < 2 || spread < 1e-6 * w * w) return null;
    const b = Math.max(0, (w * nt - n * t) / spread);
    const a = Math.max(0, (t - b * n) / w);
    return [a, b];
  }

  /**
   * The draft length, 0 to `most`, that makes the most tokens a millisecond when each drafted
   * token is accepted with probability `acceptance` (given all before it were): k drafts give
   * 1 + α + … + α^k tokens for t(k + 1). Zero: drafting does not pay. Before the fit exists,
   * `most` (the first steps measure it).
   */
  bestDraft(acceptance: number, most: number): number {
    const fit = this.fit();
    if (!fit) return most;
    const [a, b] = fit;
    let best = 0;
    let bestRate = 1 / (a + b);
    let tokens = 1;
    let p = 1;
    for (let k = 1; k <= most; k++) {
      p *= acceptance;
      tokens += p;
      const rate = tokens / (a + b * (k + 1));
      if (rate > bestRate) [best, bestRate] = [k, rate];
    }
    return best;
  }
}
