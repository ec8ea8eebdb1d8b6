// Probes each upstream URL (GET {url}/models with the upstream's key) on a timer.
// A URL is healthy while it answers 2xx; a request that could not connect takes it
// out of the rotation at once, and the next probe that succeeds puts it back.
import { networkReason } from './errors.js';
import { upstreamHeaders, type ForwardDeps } from './forward.js';
import type { Target, UpstreamPool } from './pool.js';

export const DEFAULT_PROBE_MS = 5_000;
const PROBE_TIMEOUT_MS = 5_000;

async function probe(pool: UpstreamPool, target: Target, deps: ForwardDeps): Promise<void> {
  let headers: Record<string, string>;
  try {
    headers = upstreamHeaders(pool, deps);
  } catch (err) {
    target.healthy = false;
    target.lastError = (err as Error).message;
    return;
  }
  try {
    const res = await deps.transport(`${target.base}/models`, { method: 'GET', headers, signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
    void res.body?.cancel().catch(() => undefined);
    target.healthy = res.ok;
    if (!res.ok) target.lastError = `probe answered ${res.status}`;
  } catch (err) {
    target.healthy = false;
    target.lastError = `probe: ${networkReason(err)}`;
  }
}

/** Probes every URL now and then every interval; returns a stop function. */
export function watchHealth(pool: UpstreamPool, deps: ForwardDeps): () => void {
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const round = async () => {
    await Promise.all(pool.targets.map((t) => probe(pool, t, deps)));
    if (stopped) return;
    timer = setTimeout(() => void round(), pool.spec.probe_interval_ms ?? DEFAULT_PROBE_MS);
    (timer as { unref?: () => void }).unref?.();
  };
  void round();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
}
