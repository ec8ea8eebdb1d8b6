// Attention-score kernels for the designed heads of tiny-chat. With a constant query
// and key, RoPE makes q·k a function of the offset Δ alone: Σ_i w_i cos((Δ - Δ0)·θ_i)
// over the frequency pairs. The weights below were found by a linear program (done once,
// offline) that maximises, for rope_theta 10000 and head_dim 64, the smallest gap
// between Δ0 and every other offset in [0, 2047], and between consecutive offsets
// below Δ0 (so that a prompt shorter than Δ0 still attends to a single position: the
// first one). Gaps (before scaling): 0.163 for Δ0 = 5, 0.296 for Δ0 = 1.
export const KERNEL_DELTA5 = [
  0.0917, 0.0271, 0.7059, 0.0422, 0.0208, 0.007, 0.0303, 0.0069, 0.0023, 0, 0, 0.0272, 0, 0.0098, 0.0117, 0, 0, 0, 0, 0, 0, 0, 0.0171, 0, 0, 0,
  0, 0, 0, 0, 0, 0,
];
export const KERNEL_DELTA1 = [
  0.5839, 0.0583, 0.0547, 0.0137, 0.0274, 0.0035, 0.0267, 0.0292, 0.0142, 0.0173, 0.0317, 0.0262, 0.0197, 0.0213, 0.0224, 0, 0, 0.0122, 0.0041,
  0.0002, 0, 0.0309, 0.0024, 0, 0, 0, 0, 0, 0, 0, 0, 0,
];

/** The kernel's value at offset `delta` (unscaled). */
export function kernelScore(weights: readonly number[], inv: Float32Array, delta: number, delta0: number): number {
  let s = 0;
  weights.forEach((w, i) => (s += w * Math.cos((delta - delta0) * inv[i]!)));
  return s;
}
