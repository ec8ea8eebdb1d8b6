/** A duration as OpenAI writes it in `x-ratelimit-reset-*` headers (Go's
 * time.Duration format at millisecond precision): `250ms`, `1s`, `1.5s`, `1m30s`, `6m0s`, `1h0m0s`. */
export function formatResetDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms <= 0) return '0s';
  const total = Math.ceil(ms);
  if (total < 1000) return `${total}ms`;
  const h = Math.floor(total / 3_600_000);
  const m = Math.floor((total % 3_600_000) / 60_000);
  const sMs = total % 60_000;
  const whole = Math.floor(sMs / 1000);
  const frac = sMs % 1000;
  const s = frac ? `${whole}.${String(frac).padStart(3, '0').replace(/0+$/, '')}` : String(whole);
  if (h) return `${h}h${m}m${s}s`;
  if (m) return `${m}m${s}s`;
  return `${s}s`;
}
